"""y = x * scale, then scale.mul_().add_(): mul saved scale, so backward raises the version-counter error."""
CELL = "scale_and_track"
KIND = "graph"
NOTE = "x * scale saves scale for backward, and the in-place update changes it afterwards: the version counter notices and backward raises. The product and the buffer must not share one storage."
FAILS = ["test_track_backward"]
SOURCE = '''
def scale_and_track_(x: torch.Tensor, scale: torch.Tensor, momentum: float = 0.1) -> torch.Tensor:
    """Return x * scale (the scale before the update), then update scale in place toward mean |x| per feature."""
    y = x * scale
    scale.mul_(1 - momentum).add_(momentum * x.detach().abs().reshape(-1, x.shape[-1]).mean(0))
    return y
'''
