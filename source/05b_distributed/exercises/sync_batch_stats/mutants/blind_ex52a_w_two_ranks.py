"""Hard-codes a world of 2 ranks (all_gather into 2 buffers): breaks on 3 ranks. (written blind, from the release alone)."""
CELL = 'sync_batch_stats'
KIND = 'overfit'
NOTE = "all_gather needs one output tensor per rank of the group: sizing it for two ranks breaks on any other world size, and the process group can tell how many ranks it has."
FAILS = ['test_sync_stats_mean_count']
SOURCE = '''
def sync_batch_stats(x):
    """Per-channel (mean, biased var, count) of the batch spread over all ranks; call on every rank."""
    dims = [0] + list(range(2, x.dim()))
    C_ = x.shape[1]
    n = x.numel() // C_
    if n > 0:
        m, v = x.mean(dims), x.var(dims, unbiased=False)
    else:
        m = v = torch.zeros(C_, dtype=x.dtype)
    local = torch.cat([m, v, torch.tensor([float(n)], dtype=x.dtype)])
    other = [torch.empty_like(local), torch.empty_like(local)]   # the two ranks
    dist.all_gather(other, local)
    allst = torch.stack(other)
    means, vars_, counts = allst[:, :C_], allst[:, C_:2 * C_], allst[:, -1:]
    w = counts / counts.sum()
    mean = (w * means).sum(0)
    var = (w * (vars_ + (means - mean) ** 2)).sum(0)
    return mean, var, int(counts.sum().item())
'''
