"""Computes the strides from the shape, as for a fresh tensor: right on contiguous inputs only."""
KIND = "overfit"
NOTE = "Strides computed from the shape are those of a contiguous tensor. A transposed, sliced or expanded x has other strides, and the windows must follow the ones x really has: x.stride(), not what its shape suggests."
CELL = "sliding_windows"
FAILS = ["test_sliding_windows_view", "test_sliding_windows_layouts"]
SOURCE = '''
def sliding_windows(x, size, step):
    if size < 1 or step < 1:
        raise ValueError("size and step must be positive")
    n = max(0, (x.shape[-1] - size) // step + 1)
    fresh = torch.empty(x.shape).stride()          # what a contiguous tensor of this shape would have
    return x.as_strided((*x.shape[:-1], n, size), (*fresh[:-1], step * fresh[-1], fresh[-1]), x.storage_offset())
'''
