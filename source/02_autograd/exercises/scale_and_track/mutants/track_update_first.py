"""Updates the scale first and then multiplies: y uses the new scale."""
CELL = "scale_and_track"
KIND = "wrong-value"
NOTE = "The product must use the scale from before the update: updating first makes y and its gradient use the new scale."
FAILS = ["test_track_values", "test_track_backward", "test_track_edge_cases"]
SOURCE = '''
def scale_and_track_(x: torch.Tensor, scale: torch.Tensor, momentum: float = 0.1) -> torch.Tensor:
    """Return x * scale (the scale before the update), then update scale in place toward mean |x| per feature."""
    scale.mul_(1 - momentum).add_(momentum * x.detach().abs().reshape(-1, x.shape[-1]).mean(0))
    return x * scale
'''
