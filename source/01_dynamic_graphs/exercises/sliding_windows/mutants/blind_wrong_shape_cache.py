"""Memoises the view geometry per (shape, size, step) across calls, so a later x of the same shape but other strides/offset gets stale strides. (written blind, from the release alone)."""
CELL = 'sliding_windows'
KIND = 'state'
NOTE = 'Strides belong to one tensor, not to a shape: two tensors of the same shape can lie in memory in different ways, so the geometry must be read from each input anew.'
FAILS = ['test_sliding_windows_layouts']
SOURCE = '''
_GEOMETRY = {}   # (shape, size, step) -> (shape, strides, offset): computed once, reused


def sliding_windows(x: torch.Tensor, size: int, step: int) -> torch.Tensor:
    """A view of x's last dimension cut into windows of `size` elements, one every `step`: (*x.shape[:-1], n, size)."""
    if size < 1 or step < 1:
        raise ValueError("size and step must be >= 1")
    key = (tuple(x.shape), size, step)
    if key not in _GEOMETRY:
        n = max(0, (x.shape[-1] - size) // step + 1)
        _GEOMETRY[key] = ((*x.shape[:-1], n, size), (*x.stride()[:-1], step * x.stride(-1), x.stride(-1)),
                          x.storage_offset())
    shape, strides, offset = _GEOMETRY[key]
    return x.as_strided(shape, strides, offset)
'''
