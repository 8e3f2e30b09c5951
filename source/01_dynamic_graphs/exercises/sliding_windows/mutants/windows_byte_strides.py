"""NumPy's habit: multiplies the strides by the element size, as if PyTorch's strides counted bytes."""
KIND = "wrong-value"
NOTE = "PyTorch's strides and storage offsets count elements, not bytes (NumPy's strides count bytes): multiplying them by element_size() steps too far, except for one-byte dtypes."
CELL = "sliding_windows"
FAILS = ["test_sliding_windows_values", "test_sliding_windows_view", "test_sliding_windows_layouts",
         "test_sliding_windows_edge_cases"]
SOURCE = '''
def sliding_windows(x, size, step):
    if size < 1 or step < 1:
        raise ValueError("size and step must be positive")
    n = max(0, (x.shape[-1] - size) // step + 1)
    b = [s * x.element_size() for s in x.stride()]
    return x.as_strided((*x.shape[:-1], n, size), (*b[:-1], step * b[-1], b[-1]), x.storage_offset())
'''
