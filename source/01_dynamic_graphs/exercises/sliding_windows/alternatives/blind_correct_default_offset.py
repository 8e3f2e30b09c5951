"""Correct: count via len(range(...)), torch.as_strided with the offset left out (it defaults to x.storage_offset()). (written blind, from the release alone)."""
CELL = 'sliding_windows'
SOURCE = '''
import torch


def sliding_windows(x: torch.Tensor, size: int, step: int) -> torch.Tensor:
    """A view of x's last dimension cut into windows of `size` elements, one every `step`: (*x.shape[:-1], n, size)."""
    if not (isinstance(size, int) and isinstance(step, int)) or min(size, step) < 1:
        raise ValueError("size and step must be positive integers")
    *lead, length = x.shape
    *lead_strides, unit = x.stride()
    count = len(range(0, length - size + 1, step))      # start positions of windows that fit entirely
    return torch.as_strided(x, (*lead, count, size), (*lead_strides, unit * step, unit))
'''
