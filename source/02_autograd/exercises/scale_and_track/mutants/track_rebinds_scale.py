"""scale = (1 - m) * scale + m * stat: out of place, so the caller's buffer never changes."""
CELL = "scale_and_track"
KIND = "state"
NOTE = "Rebinding the name scale builds a new tensor and leaves the caller's buffer unchanged; the update has to write into the caller's tensor object."
FAILS = ['test_track_values', 'test_track_backward', 'test_track_state', 'test_track_edge_cases']
SOURCE = '''
def scale_and_track_(x: torch.Tensor, scale: torch.Tensor, momentum: float = 0.1) -> torch.Tensor:
    """Return x * scale (the scale before the update), then update scale in place toward mean |x| per feature."""
    y = x * scale
    scale = (1 - momentum) * scale + momentum * x.detach().abs().reshape(-1, x.shape[-1]).mean(0)
    return y
'''
