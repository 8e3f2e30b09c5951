"""Per-rank mean/var with x.mean(dims): an empty shard gives NaN, and NaN * 0 weight poisons the combined stats. (written blind, from the release alone)."""
CELL = 'sync_batch_stats'
KIND = 'edge-case'
NOTE = "The mean and variance of an empty shard are NaN, and NaN times a zero weight is still NaN: one empty rank poisons the combined statistics. An empty shard must contribute nothing."
FAILS = ['test_sync_stats_mean_count', 'test_sync_stats_var']
SOURCE = '''
def sync_batch_stats(x):
    """Per-channel (mean, biased var, count) of the batch spread over all ranks; call on every rank."""
    dims = [0] + list(range(2, x.dim()))
    n = x.numel() // x.shape[1]
    mean_r = x.mean(dims)
    var_r = x.var(dims, unbiased=False)
    local = torch.cat([mean_r, var_r, torch.tensor([float(n)], dtype=x.dtype)])
    gathered = [torch.empty_like(local) for _ in range(dist.get_world_size())]
    dist.all_gather(gathered, local)
    allst = torch.stack(gathered)
    C_ = x.shape[1]
    means, vars_, counts = allst[:, :C_], allst[:, C_:2 * C_], allst[:, -1:]
    w = counts / counts.sum()
    mean = (w * means).sum(0)
    var = (w * (vars_ + (means - mean) ** 2)).sum(0)
    return mean, var, int(counts.sum().item())
'''
