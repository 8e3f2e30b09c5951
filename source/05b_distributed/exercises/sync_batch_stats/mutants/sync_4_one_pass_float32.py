"""All-reduces sums and sums of squares in the input dtype (E[x^2] - E[x]^2): exact in float64, wrong in float32 with a large mean."""
CELL = "sync_batch_stats"
KIND = "edge-case"
NOTE = "E[x^2] - E[x]^2 subtracts two large, nearly equal numbers: in float32, with values near 500 and a spread of 0.1, the variance loses nearly all its digits. Per-rank statistics can be combined without it."
FAILS = ['test_sync_stats_var']
SOURCE = '''
def sync_batch_stats(x):
    dims = [0] + list(range(2, x.dim()))
    count = torch.tensor([x.numel() // x.shape[1]], dtype=torch.float64)
    s = x.sum(dim=dims)
    sq = (x * x).sum(dim=dims)
    dist.all_reduce(s)
    dist.all_reduce(sq)
    dist.all_reduce(count)
    n = int(count.item())
    mean = s / n
    return mean, sq / n - mean * mean, n
'''
