"""Only rejects size == 0 and step == 0: a negative size or step does not raise ValueError (negative step silently gives 0 windows). (written blind, from the release alone)."""
CELL = 'sliding_windows'
KIND = 'edge-case'
NOTE = "'At least 1' excludes negative numbers too: testing only for zero lets a negative size or step through to a confusing error, or to a wrong view."
FAILS = ['test_sliding_windows_edge_cases']
SOURCE = '''
def sliding_windows(x: torch.Tensor, size: int, step: int) -> torch.Tensor:
    """A view of x's last dimension cut into windows of `size` elements, one every `step`: (*x.shape[:-1], n, size)."""
    if size == 0 or step == 0:
        raise ValueError("size and step must not be 0")
    n = max(0, (x.shape[-1] - size) // step + 1)
    return x.as_strided((*x.shape[:-1], n, size), (*x.stride()[:-1], step * x.stride(-1), x.stride(-1)),
                        x.storage_offset())
'''
