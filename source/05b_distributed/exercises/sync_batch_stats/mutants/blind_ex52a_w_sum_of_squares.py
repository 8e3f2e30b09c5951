"""All-reduces sum(x), sum(x**2) and count and uses E[x^2] - E[x]^2: catastrophic cancellation in float32 near 500. (written blind, from the release alone)."""
CELL = 'sync_batch_stats'
KIND = 'wrong-value'
NOTE = "E[x^2] - E[x]^2 subtracts two large, nearly equal numbers: in float32, with values near 500 and a spread of 0.1, the variance loses nearly all its digits. Per-rank statistics can be combined without it."
FAILS = ['test_sync_stats_var']
SOURCE = '''
def sync_batch_stats(x):
    """Per-channel (mean, biased var, count) of the batch spread over all ranks; call on every rank."""
    dims = [0] + list(range(2, x.dim()))
    C_ = x.shape[1]
    n = x.numel() // C_ if C_ else 0
    stats = torch.cat([x.sum(dims), (x * x).sum(dims), torch.full((1,), float(n), dtype=x.dtype)])
    dist.all_reduce(stats)
    count = int(round(float(stats[-1])))
    mean = stats[:C_] / count
    var = stats[C_:2 * C_] / count - mean * mean
    return mean, var, count
'''
