"""Uses as_strided_, the in-place form: x itself is turned into the windows."""
KIND = "mutation"
NOTE = "as_strided_ (with the underscore) rewrites x's own shape, strides and offset, so the caller's x is no longer the tensor it passed in. as_strided makes a new view and leaves x alone."
CELL = "sliding_windows"
FAILS = ["test_sliding_windows_values", "test_sliding_windows_view", "test_sliding_windows_edge_cases"]
SOURCE = '''
def sliding_windows(x, size, step):
    if size < 1 or step < 1:
        raise ValueError("size and step must be positive")
    n = max(0, (x.shape[-1] - size) // step + 1)
    s = x.stride()
    return x.as_strided_((*x.shape[:-1], n, size), (*s[:-1], step * s[-1], s[-1]), x.storage_offset())
'''
