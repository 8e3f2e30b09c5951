"""Averages over dim=tuple(range(x.dim() - 1)): for a 1-D x that is the empty tuple, which mean() reads as 'every dimension', so m is one scalar instead of |x|. (written blind, from the release alone)."""
CELL = 'scale_and_track'
KIND = 'edge-case'
NOTE = "For a 1-D x there is no dimension to average over, and mean over an empty tuple of dimensions averages over everything: the statistic becomes one number instead of |x|."
FAILS = ['test_track_edge_cases']
SOURCE = '''
def scale_and_track_(x: torch.Tensor, scale: torch.Tensor, momentum: float = 0.1) -> torch.Tensor:
    """Return x * scale (the scale before the update), then update scale in place toward mean |x| per feature."""
    y = x * scale.clone()
    m = x.detach().abs().mean(dim=tuple(range(x.dim() - 1)))
    scale.mul_(1 - momentum).add_(momentum * m)
    return y
'''
