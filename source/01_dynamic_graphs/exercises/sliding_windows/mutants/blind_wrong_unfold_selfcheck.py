"""as_strided is right, but the function checks itself against x.unfold inside (the forbidden op runs). (written blind, from the release alone)."""
CELL = 'sliding_windows'
KIND = 'contract'
NOTE = 'A self-check inside the function still runs the forbidden op on every call; checks against a library belong in a cell of your own.'
FAILS = ['test_sliding_windows_view']
SOURCE = '''
def sliding_windows(x: torch.Tensor, size: int, step: int) -> torch.Tensor:
    """A view of x's last dimension cut into windows of `size` elements, one every `step`: (*x.shape[:-1], n, size)."""
    if size < 1 or step < 1:
        raise ValueError("size and step must be >= 1")
    n = max(0, (x.shape[-1] - size) // step + 1)
    out = x.as_strided((*x.shape[:-1], n, size), (*x.stride()[:-1], step * x.stride(-1), x.stride(-1)),
                       x.storage_offset())
    if n > 0:
        assert torch.equal(out, x.unfold(-1, size, step)), "my windows differ from unfold"   # sanity check
    return out
'''
