"""Replaces the buffer's storage with scale.data = new (same Python object, new storage): a scale that is a view into a larger buffer no longer writes into that buffer. (written blind, from the release alone)."""
CELL = 'scale_and_track'
KIND = 'mutation'
NOTE = "Assigning to .data swaps in new storage: the object stays the same, but a scale that is a view into a larger buffer no longer writes into that buffer. The update must write into the existing storage."
FAILS = ['test_track_values']
SOURCE = '''
def scale_and_track_(x: torch.Tensor, scale: torch.Tensor, momentum: float = 0.1) -> torch.Tensor:
    """Return x * scale (the scale before the update), then update scale in place toward mean |x| per feature."""
    y = x * scale.clone()
    m = x.detach().abs().reshape(-1, x.shape[-1]).mean(0)
    scale.data = (1 - momentum) * scale.detach() + momentum * m
    return y
'''
