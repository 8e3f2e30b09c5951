"""Averages the per-rank means and variances: wrong when shards have different sizes."""
CELL = "sync_batch_stats"
KIND = "wrong-value"
NOTE = "Averaging the ranks' means and variances treats a rank with 3 rows like one with 30, and the variance also misses how far the rank means lie apart from each other."
FAILS = ["test_sync_stats_mean_count", "test_sync_stats_var"]
SOURCE = '''
def sync_batch_stats(x):
    dims = [0] + list(range(2, x.dim()))
    mean = x.mean(dim=dims)
    var = x.var(dim=dims, unbiased=False)
    count = torch.tensor([x.numel() // x.shape[1]])
    dist.all_reduce(mean)
    dist.all_reduce(var)
    dist.all_reduce(count)
    ws = dist.get_world_size()
    return mean / ws, var / ws, int(count.item())
'''
