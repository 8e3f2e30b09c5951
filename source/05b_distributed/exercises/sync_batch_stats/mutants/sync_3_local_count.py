"""All-reduces the sums but divides by this rank's own count."""
CELL = "sync_batch_stats"
KIND = "wrong-value"
NOTE = "Once the sums are all-reduced they cover every rank, so dividing them by this rank's own count gives the wrong mean and variance; the count returned must be the total over all ranks too."
FAILS = ["test_sync_stats_mean_count", "test_sync_stats_var"]
SOURCE = '''
def sync_batch_stats(x):
    dims = [0] + list(range(2, x.dim()))
    n = x.numel() // x.shape[1]
    s = x.sum(dim=dims)
    sq = (x * x).sum(dim=dims)
    dist.all_reduce(s)
    dist.all_reduce(sq)
    mean = s / n
    return mean, sq / n - mean * mean, n
'''
