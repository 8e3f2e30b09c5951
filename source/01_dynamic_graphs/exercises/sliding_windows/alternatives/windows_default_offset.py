"""torch.as_strided with the offset left out (it defaults to x's own), the sizes and strides built in a loop."""
CELL = "sliding_windows"
SOURCE = '''
def sliding_windows(x, size, step):
    for name, value in (("size", size), ("step", step)):
        if value < 1:
            raise ValueError(f"{name} must be >= 1, got {value}")
    sizes, strides = [], []
    for d in range(x.dim() - 1):
        sizes.append(x.shape[d])
        strides.append(x.stride(d))
    windows = 0
    while windows * step + size <= x.shape[-1]:
        windows += 1
    sizes += [windows, size]
    strides += [x.stride(-1) * step, x.stride(-1)]
    return torch.as_strided(x, sizes, strides)
'''
