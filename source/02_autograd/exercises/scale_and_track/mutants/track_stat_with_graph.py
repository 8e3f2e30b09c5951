"""The statistic computed from x with its graph: the buffer gets a grad_fn and drags every later step's graph along."""
CELL = "scale_and_track"
KIND = "graph"
NOTE = "Computing the statistic from x with its graph makes the buffer part of autograd's graph (it requires grad and gains a grad_fn); the update should use x's values only."
FAILS = ["test_track_state", "test_track_backward"]
SOURCE = '''
def scale_and_track_(x: torch.Tensor, scale: torch.Tensor, momentum: float = 0.1) -> torch.Tensor:
    """Return x * scale (the scale before the update), then update scale in place toward mean |x| per feature."""
    y = x * scale.clone()
    scale.mul_(1 - momentum).add_(momentum * x.abs().reshape(-1, x.shape[-1]).mean(0))
    return y
'''
