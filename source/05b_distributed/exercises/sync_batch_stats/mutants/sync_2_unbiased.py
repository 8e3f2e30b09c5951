"""Uses the unbiased variance (divides by count - 1), which BatchNorm does not use to normalise."""
CELL = "sync_batch_stats"
KIND = "wrong-value"
NOTE = "BatchNorm normalises with the biased variance: divided by the number of values per channel, not by that number minus 1."
FAILS = ["test_sync_stats_var"]
SOURCE = '''
def sync_batch_stats(x):
    dims = [0] + list(range(2, x.dim()))
    s = x.sum(dim=dims)
    sq = (x * x).sum(dim=dims)
    n = torch.tensor([float(x.numel() // x.shape[1])], dtype=torch.float64)
    for t in (s, sq, n):
        dist.all_reduce(t)
    n = int(n.item())
    mean = s / n
    var = (sq - n * mean * mean) / (n - 1)
    return mean, var, n
'''
