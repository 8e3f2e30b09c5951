"""Counts windows with int((L - size) / step) + 1, which truncates toward zero: size = L + 1 with step >= 2 gives 1 window instead of 0. (written blind, from the release alone)."""
CELL = 'sliding_windows'
KIND = 'wrong-value'
NOTE = 'int() of a negative fraction rounds toward zero, not down: a window count must use floor division and a floor at zero, or one window too many appears when none fits.'
FAILS = ['test_sliding_windows_edge_cases']
SOURCE = '''
def sliding_windows(x: torch.Tensor, size: int, step: int) -> torch.Tensor:
    """A view of x's last dimension cut into windows of `size` elements, one every `step`: (*x.shape[:-1], n, size)."""
    if size < 1 or step < 1:
        raise ValueError("size and step must be >= 1")
    n = max(0, int((x.shape[-1] - size) / step) + 1)
    return x.as_strided((*x.shape[:-1], n, size), (*x.stride()[:-1], step * x.stride(-1), x.stride(-1)),
                        x.storage_offset())
'''
