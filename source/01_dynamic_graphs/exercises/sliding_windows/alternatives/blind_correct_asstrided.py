"""Correct: as_strided with x's own strides and offset, the count clamped at zero. (written blind, from the release alone)."""
CELL = 'sliding_windows'
SOURCE = '''
def sliding_windows(x: torch.Tensor, size: int, step: int) -> torch.Tensor:
    """A view of x's last dimension cut into windows of `size` elements, one every `step`: (*x.shape[:-1], n, size)."""
    if size < 1 or step < 1:
        raise ValueError(f"size and step must be >= 1, got size={size}, step={step}")
    n = max(0, (x.shape[-1] - size) // step + 1)
    return x.as_strided((*x.shape[:-1], n, size), (*x.stride()[:-1], step * x.stride(-1), x.stride(-1)),
                        x.storage_offset())
'''
