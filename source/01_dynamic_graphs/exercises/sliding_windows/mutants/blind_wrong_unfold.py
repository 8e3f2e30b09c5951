"""Uses Tensor.unfold inside sliding_windows, which the statement forbids. (written blind, from the release alone)."""
CELL = 'sliding_windows'
KIND = 'contract'
NOTE = "The exercise is to build the view from x's strides and storage offset yourself; a library call that does it in one step skips what the exercise teaches."
FAILS = ['test_sliding_windows_view']
SOURCE = '''
def sliding_windows(x: torch.Tensor, size: int, step: int) -> torch.Tensor:
    """A view of x's last dimension cut into windows of `size` elements, one every `step`: (*x.shape[:-1], n, size)."""
    if size < 1 or step < 1:
        raise ValueError("size and step must be >= 1")
    if size > x.shape[-1]:                         # unfold refuses this: no window fits, return an empty view
        return x[..., :0].unsqueeze(-1).expand(*x.shape[:-1], 0, size)
    return x.unfold(-1, size, step)
'''
