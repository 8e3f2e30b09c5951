"""Calls Tensor.unfold, which the statement rules out (right values, and a view)."""
KIND = "contract"
NOTE = "Tensor.unfold computes exactly these windows, which is why the exercise rules it out: the point is to build the view from x's strides and storage offset yourself. Keep unfold for checking your answer."
CELL = "sliding_windows"
FAILS = ["test_sliding_windows_view"]
SOURCE = '''
def sliding_windows(x, size, step):
    if size < 1 or step < 1:
        raise ValueError("size and step must be positive")
    if size > x.shape[-1]:
        return x.as_strided((*x.shape[:-1], 0, size), (*x.stride(), 1), x.storage_offset())
    return x.unfold(-1, size, step)
'''
