"""Builds the windows with new_empty(0).set_(x's storage, ...): same memory, but not a view of x (no autograd link, _base is None, gradients never reach x). (written blind, from the release alone)."""
CELL = 'sliding_windows'
KIND = 'graph'
NOTE = "Sharing x's memory is not enough to be a view: set_ points a new tensor at the storage without recording x as its base, so the two keep separate version counters and autograd cannot connect them."
FAILS = ['test_sliding_windows_view']
SOURCE = '''
def sliding_windows(x: torch.Tensor, size: int, step: int) -> torch.Tensor:
    """A view of x's last dimension cut into windows of `size` elements, one every `step`: (*x.shape[:-1], n, size)."""
    if size < 1 or step < 1:
        raise ValueError("size and step must be >= 1")
    n = max(0, (x.shape[-1] - size) // step + 1)
    out = x.new_empty(0)
    with torch.no_grad():
        out.set_(x.untyped_storage(), x.storage_offset(), (*x.shape[:-1], n, size),
                 (*x.stride()[:-1], step * x.stride(-1), x.stride(-1)))
    return out
'''
