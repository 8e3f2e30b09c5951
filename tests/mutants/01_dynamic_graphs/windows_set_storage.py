"""An empty tensor pointed at x's storage with set_(storage, offset, size, stride): the same view, without as_strided."""
CELL = "sliding_windows"
SOURCE = '''
def sliding_windows(x, size, step):
    if not (size >= 1 and step >= 1):
        raise ValueError(f"size={size} and step={step} must both be at least 1")
    length = x.size(-1)
    n = (length - size) // step + 1 if length >= size else 0
    shape = list(x.shape[:-1]) + [n, size]
    strides = list(x.stride()[:-1]) + [step * x.stride(-1), x.stride(-1)]
    out = torch.empty(0, dtype=x.dtype, device=x.device)
    return out.set_(x.untyped_storage(), x.storage_offset(), shape, strides)
'''
