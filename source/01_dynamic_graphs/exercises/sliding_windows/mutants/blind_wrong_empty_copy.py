"""When no window fits, returns a fresh empty tensor (new_empty) instead of a view of x. (written blind, from the release alone)."""
CELL = 'sliding_windows'
KIND = 'edge-case'
NOTE = 'A result with no window is still a view of x: a fresh empty tensor shares nothing, so it breaks the rule exactly where no element would show it.'
FAILS = ['test_sliding_windows_edge_cases']
SOURCE = '''
def sliding_windows(x: torch.Tensor, size: int, step: int) -> torch.Tensor:
    """A view of x's last dimension cut into windows of `size` elements, one every `step`: (*x.shape[:-1], n, size)."""
    if size < 1 or step < 1:
        raise ValueError("size and step must be >= 1")
    L = x.shape[-1]
    if size > L:                                   # nothing fits: an empty result of the right shape
        return x.new_empty((*x.shape[:-1], 0, size))
    n = (L - size) // step + 1
    return x.as_strided((*x.shape[:-1], n, size), (*x.stride()[:-1], step * x.stride(-1), x.stride(-1)),
                        x.storage_offset())
'''
