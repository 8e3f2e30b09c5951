"""Correct: two-pass all-reduce (sum and count -> global mean, then sum of squared deviations from it). (written blind, from the release alone)."""
CELL = 'sync_batch_stats'
SOURCE = '''
def sync_batch_stats(x):
    """Per-channel (mean, biased var, count) of the batch spread over all ranks; call on every rank."""
    dims = [0] + list(range(2, x.dim()))
    C_ = x.shape[1]
    n = x.numel() // C_ if C_ else 0
    first = torch.cat([x.sum(dims) if n else torch.zeros(C_, dtype=x.dtype),
                       torch.tensor([float(n)], dtype=x.dtype)])
    dist.all_reduce(first)
    count = int(round(float(first[-1])))
    mean = first[:C_] / count
    shape = [1, C_] + [1] * (x.dim() - 2)
    sq = ((x - mean.view(shape)) ** 2).sum(dims) if n else torch.zeros(C_, dtype=x.dtype)
    dist.all_reduce(sq)
    return mean, sq / count, count
'''
