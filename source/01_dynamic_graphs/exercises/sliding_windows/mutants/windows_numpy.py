"""Goes through NumPy's sliding_window_view and torch.from_numpy: new storage objects, and no bfloat16."""
KIND = "contract"
NOTE = "torch.from_numpy wraps the array's memory in a new storage that starts at its first element: not x's storage unless x starts at offset 0. And NumPy has no bfloat16."
CELL = "sliding_windows"
FAILS = ["test_sliding_windows_values", "test_sliding_windows_view", "test_sliding_windows_layouts",
         "test_sliding_windows_edge_cases"]
SOURCE = '''
import numpy as np


def sliding_windows(x, size, step):
    if size < 1 or step < 1:
        raise ValueError("size and step must be positive")
    view = np.lib.stride_tricks.sliding_window_view(x.numpy(), size, axis=-1)[..., ::step, :]
    return torch.from_numpy(view)
'''
