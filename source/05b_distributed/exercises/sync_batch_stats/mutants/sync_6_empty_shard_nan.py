"""SyncBatchNorm's combination, but an empty shard's NaN mean and variance are not filtered out."""
CELL = "sync_batch_stats"
KIND = "edge-case"
NOTE = "The mean and variance of an empty shard are NaN, and NaN times a zero weight is still NaN: one empty rank poisons the combined statistics. An empty shard must contribute nothing."
FAILS = ['test_sync_stats_mean_count', 'test_sync_stats_var']
SOURCE = '''
def sync_batch_stats(x):
    dims = [0] + list(range(2, x.dim()))
    n_local = x.numel() // x.shape[1]
    local = torch.stack([x.mean(dim=dims), x.var(dim=dims, unbiased=False)])
    world = dist.get_world_size()
    stats = [torch.empty_like(local) for _ in range(world)]
    counts = [torch.zeros(1, dtype=torch.int64) for _ in range(world)]
    dist.all_gather(stats, local)
    dist.all_gather(counts, torch.tensor([n_local]))
    stats, counts = torch.stack(stats), torch.cat(counts)
    total = int(counts.sum())
    w = (counts.to(x.dtype) / total).unsqueeze(1)
    mean = (w * stats[:, 0]).sum(0)
    var = (w * (stats[:, 1] + (stats[:, 0] - mean) ** 2)).sum(0)
    return mean, var, total
'''
