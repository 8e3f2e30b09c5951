"""Flattens the leading dims with reshape(-1, L) and reshapes back: a copy (not a view) for non-contiguous inputs with 3+ dims. (written blind, from the release alone)."""
CELL = 'sliding_windows'
KIND = 'edge-case'
NOTE = 'reshape returns a view only when the memory allows it; on a non-contiguous input it copies, and the windows then live in a copy that writes never carry back to x.'
FAILS = ['test_sliding_windows_edge_cases', 'test_sliding_windows_layouts']
SOURCE = '''
def sliding_windows(x: torch.Tensor, size: int, step: int) -> torch.Tensor:
    """A view of x's last dimension cut into windows of `size` elements, one every `step`: (*x.shape[:-1], n, size)."""
    if size < 1 or step < 1:
        raise ValueError("size and step must be >= 1")
    lead, L = x.shape[:-1], x.shape[-1]
    rows = x.reshape(-1, L)                        # work on a 2-D (rows, L) tensor
    n = max(0, (L - size) // step + 1)
    w = rows.as_strided((rows.shape[0], n, size), (rows.stride(0), step * rows.stride(1), rows.stride(1)),
                        rows.storage_offset())
    return w.reshape(*lead, n, size)
'''
