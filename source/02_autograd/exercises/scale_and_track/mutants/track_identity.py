"""Returns x and leaves the buffer alone."""
CELL = "scale_and_track"
KIND = "do-nothing"
NOTE = "The answer does not do the work the statement asks for yet: it returns x and leaves the buffer alone."
FAILS = ['test_track_values', 'test_track_backward', 'test_track_state', 'test_track_edge_cases']
SOURCE = '''
def scale_and_track_(x: torch.Tensor, scale: torch.Tensor, momentum: float = 0.1) -> torch.Tensor:
    """Return x * scale (the scale before the update), then update scale in place toward mean |x| per feature."""
    return x
'''
