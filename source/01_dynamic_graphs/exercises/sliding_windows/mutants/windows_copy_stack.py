"""Stacks copies of the slices: the values are right, but nothing is shared with x."""
KIND = "contract"
NOTE = "torch.stack copies every window into new memory, so the result is not a view: writing through it leaves x unchanged, and overlapping windows store their elements several times. Build one view over x's storage instead."
CELL = "sliding_windows"
FAILS = ["test_sliding_windows_view", "test_sliding_windows_layouts", "test_sliding_windows_edge_cases"]
SOURCE = '''
def sliding_windows(x, size, step):
    if size < 1 or step < 1:
        raise ValueError("size and step must be positive")
    starts = range(0, x.shape[-1] - size + 1, step)
    if len(starts) == 0:
        return x.new_empty((*x.shape[:-1], 0, size))
    return torch.stack([x[..., s:s + size] for s in starts], dim=-2)
'''
