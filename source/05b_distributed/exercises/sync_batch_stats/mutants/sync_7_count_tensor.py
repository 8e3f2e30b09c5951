"""Right statistics (two-pass, in float64), but returns the count as the all-reduced tensor, not a Python int (from the blind test)."""
CELL = "sync_batch_stats"
KIND = "contract"
NOTE = "The count must be a Python int: a tensor that comes out of a collective is not one, even when it holds a single value."
FAILS = ["test_sync_stats_mean_count"]
SOURCE = '''
def sync_batch_stats(x):
    dims = [0] + list(range(2, x.dim()))
    n = torch.tensor([x.numel() // x.shape[1]], dtype=torch.float64)
    s = x.double().sum(dim=dims)
    dist.all_reduce(n); dist.all_reduce(s)
    mean = s / n
    shape = [1, -1] + [1] * (x.dim() - 2)
    sq = ((x.double() - mean.view(shape)) ** 2).sum(dim=dims)
    dist.all_reduce(sq)
    return mean.to(x.dtype), (sq / n).to(x.dtype), n.long()[0]
'''
