"""Passes storage_offset=0, as if offsets counted from x's first element: wrong for any x that starts later."""
KIND = "edge-case"
NOTE = "as_strided's storage offset counts from the start of the storage, not from x's first element: a slice of a bigger tensor starts at x.storage_offset(), and offset 0 reads elements before x."
CELL = "sliding_windows"
FAILS = ["test_sliding_windows_view", "test_sliding_windows_layouts"]
SOURCE = '''
def sliding_windows(x, size, step):
    if size < 1 or step < 1:
        raise ValueError("size and step must be positive")
    n = max(0, (x.shape[-1] - size) // step + 1)
    s = x.stride()
    return torch.as_strided(x, (*x.shape[:-1], n, size), (*s[:-1], step * s[-1], s[-1]), 0)
'''
