"""Calls x.contiguous() first: the strides are then easy, but a non-contiguous x is copied."""
KIND = "contract"
NOTE = "x.contiguous() returns x itself only when x is already contiguous; a transposed, sliced or expanded x is copied, and the windows are then a view of that copy, not of x. Use x's own strides instead."
CELL = "sliding_windows"
FAILS = ["test_sliding_windows_view", "test_sliding_windows_layouts"]
SOURCE = '''
def sliding_windows(x, size, step):
    if size < 1 or step < 1:
        raise ValueError("size and step must be positive")
    x = x.contiguous()
    n = max(0, (x.shape[-1] - size) // step + 1)
    s = x.stride()
    return x.as_strided((*x.shape[:-1], n, size), (*s[:-1], step, 1), x.storage_offset())
'''
