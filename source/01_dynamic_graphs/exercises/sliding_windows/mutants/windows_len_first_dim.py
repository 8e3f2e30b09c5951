"""Counts the windows from len(x), the first dimension, instead of the last one."""
KIND = "wrong-value"
NOTE = "The windows run along the last dimension, so their count comes from x.shape[-1]; len(x) is the first dimension's length, which is the same only for a 1-D x."
CELL = "sliding_windows"
FAILS = ["test_sliding_windows_values", "test_sliding_windows_view", "test_sliding_windows_layouts",
         "test_sliding_windows_edge_cases"]
SOURCE = '''
def sliding_windows(x, size, step):
    if size < 1 or step < 1:
        raise ValueError("size and step must be positive")
    n = max(0, (len(x) - size) // step + 1)
    s = x.stride()
    return x.as_strided((*x.shape[:-1], n, size), (*s[:-1], step * s[-1], s[-1]), x.storage_offset())
'''
