"""scale = (1 - m) * scale + m * stat: out of place, so the caller's buffer never changes."""
CELL = "scale_and_track"
KIND = "state"
FAILS = ['test_track_values', 'test_track_backward', 'test_track_state', 'test_track_edge_cases']
SOURCE = '''
def scale_and_track_(x: torch.Tensor, scale: torch.Tensor, momentum: float = 0.1) -> torch.Tensor:
    """Return x * scale (the scale before the update), then update scale in place toward mean |x| per feature."""
    y = x * scale
    scale = (1 - momentum) * scale + momentum * x.detach().abs().reshape(-1, x.shape[-1]).mean(0)
    return y
'''
