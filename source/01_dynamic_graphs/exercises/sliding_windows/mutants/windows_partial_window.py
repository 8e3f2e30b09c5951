"""Rounds the window count up: keeps a last window that runs past the end of x."""
KIND = "wrong-value"
NOTE = "A window counts only if all of its size elements lie in x: rounding the count up keeps a partial last window, which reads past the end of x (into whatever the storage holds next, or out of it)."
CELL = "sliding_windows"
FAILS = ["test_sliding_windows_values", "test_sliding_windows_view", "test_sliding_windows_layouts",
         "test_sliding_windows_edge_cases"]
SOURCE = '''
import math


def sliding_windows(x, size, step):
    if size < 1 or step < 1:
        raise ValueError("size and step must be positive")
    n = max(0, math.ceil((x.shape[-1] - size) / step) + 1)
    s = x.stride()
    return x.as_strided((*x.shape[:-1], n, size), (*s[:-1], step * s[-1], s[-1]), x.storage_offset())
'''
