"""The update under torch.no_grad(), believed to make it safe: the version counter still counts, backward raises."""
CELL = "scale_and_track"
KIND = "graph"
NOTE = "torch.no_grad() stops recording, not version counting: an in-place change of a tensor the product saved is still detected, and backward raises."
FAILS = ["test_track_backward"]
SOURCE = '''
def scale_and_track_(x: torch.Tensor, scale: torch.Tensor, momentum: float = 0.1) -> torch.Tensor:
    """Return x * scale (the scale before the update), then update scale in place toward mean |x| per feature."""
    y = x * scale
    with torch.no_grad():
        scale.mul_(1 - momentum).add_(momentum * x.detach().abs().reshape(-1, x.shape[-1]).mean(0))
    return y
'''
