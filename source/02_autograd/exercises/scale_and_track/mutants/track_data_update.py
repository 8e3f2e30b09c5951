"""The update written through scale.data: no error any more, but backward multiplies by the NEW scale."""
CELL = "scale_and_track"
KIND = "graph"
NOTE = "An in-place change through .data is hidden from the version counter: no error, but backward silently uses the updated scale instead of the one the forward pass used."
FAILS = ["test_track_backward"]
SOURCE = '''
def scale_and_track_(x: torch.Tensor, scale: torch.Tensor, momentum: float = 0.1) -> torch.Tensor:
    """Return x * scale (the scale before the update), then update scale in place toward mean |x| per feature."""
    y = x * scale
    scale.data.mul_(1 - momentum).add_(momentum * x.detach().abs().reshape(-1, x.shape[-1]).mean(0))
    return y
'''
