"""Counts the windows without a floor at zero: a size longer than x gives a negative count, and as_strided raises."""
KIND = "edge-case"
NOTE = "When size is larger than the last dimension no window fits, and (L - size) // step + 1 can be negative: the count must not go below 0, so that the result is an empty view of shape (..., 0, size)."
CELL = "sliding_windows"
FAILS = ["test_sliding_windows_edge_cases"]
SOURCE = '''
def sliding_windows(x, size, step):
    if size < 1 or step < 1:
        raise ValueError("size and step must be positive")
    n = (x.shape[-1] - size) // step + 1
    s = x.stride()
    return x.as_strided((*x.shape[:-1], n, size), (*s[:-1], step * s[-1], s[-1]), x.storage_offset())
'''
