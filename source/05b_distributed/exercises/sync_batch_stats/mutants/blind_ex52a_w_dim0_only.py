"""Reduces over dimension 0 only and counts rows: right for (N, C) shards, wrong for (N, C, H, W). (written blind, from the release alone)."""
CELL = 'sync_batch_stats'
KIND = 'edge-case'
NOTE = "Channels are in dimension 1 and every other dimension holds values of a channel: reducing over dimension 0 alone is right for (N, C) shards but not for (N, C, H, W), which have N*H*W values per channel."
FAILS = ['test_sync_stats_mean_count', 'test_sync_stats_var']
SOURCE = '''
def sync_batch_stats(x):
    """Per-channel (mean, biased var, count) of the batch spread over all ranks; call on every rank."""
    n = x.shape[0]
    if n > 0:
        mean_r, var_r = x.mean(0), x.var(0, unbiased=False)
    else:
        mean_r = var_r = torch.zeros(x.shape[1:], dtype=x.dtype)
    local = torch.stack([mean_r, var_r, torch.full_like(mean_r, float(n))])
    gathered = [torch.empty_like(local) for _ in range(dist.get_world_size())]
    dist.all_gather(gathered, local)
    allst = torch.stack(gathered)          # (world, 3, C)
    means, vars_, counts = allst[:, 0], allst[:, 1], allst[:, 2]
    total = counts.sum(0)
    mean = (counts * means).sum(0) / total
    var = (counts * (vars_ + (means - mean) ** 2)).sum(0) / total
    return mean, var, int(total.flatten()[0].item())
'''
