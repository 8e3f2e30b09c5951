"""Special-cases 'no window fits' with torch.empty: the right shape, but a new float32 tensor, not a view of x."""
KIND = "edge-case"
NOTE = "With no window the result is still a view of x, in x's dtype: the same as_strided call makes it, with a count of 0. torch.empty(...) makes a new float32 tensor on a storage of its own."
CELL = "sliding_windows"
FAILS = ["test_sliding_windows_edge_cases"]
SOURCE = '''
def sliding_windows(x, size, step):
    if size < 1 or step < 1:
        raise ValueError("size and step must be positive")
    if size > x.shape[-1]:
        return torch.empty(*x.shape[:-1], 0, size)
    n = (x.shape[-1] - size) // step + 1
    s = x.stride()
    return x.as_strided((*x.shape[:-1], n, size), (*s[:-1], step * s[-1], s[-1]), x.storage_offset())
'''
