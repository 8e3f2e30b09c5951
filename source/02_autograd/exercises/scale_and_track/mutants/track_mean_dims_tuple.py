"""mean(dim=tuple(range(x.dim() - 1))): right for rank >= 2, but for a 1-D x dim=() averages over everything."""
CELL = "scale_and_track"
KIND = "edge-case"
NOTE = "For a 1-D x there is no dimension to average over, and mean over an empty tuple of dimensions averages over everything: the statistic becomes one number instead of |x|."
FAILS = ["test_track_edge_cases"]
SOURCE = '''
def scale_and_track_(x: torch.Tensor, scale: torch.Tensor, momentum: float = 0.1) -> torch.Tensor:
    """Return x * scale (the scale before the update), then update scale in place toward mean |x| per feature."""
    y = x * scale.clone()
    scale.mul_(1 - momentum).add_(momentum * x.detach().abs().mean(dim=tuple(range(x.dim() - 1))))
    return y
'''
