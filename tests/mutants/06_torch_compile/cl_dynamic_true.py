"""dynamic=True alone: duck sizing specialises a first length equal to the batch or feature size, so it recompiles."""
CELL = "compile_for_lengths"
FAILS = ["test_compile_for_lengths_one_compile", "test_compile_for_lengths_dim"]
SOURCE = '''
def compile_for_lengths(model, backend, dim: int = 1):
    """Return run(*tensors) -> model(*tensors), compiled once with `backend` for any lengths 2..64 at dimension `dim`."""
    compiled = torch.compile(model, backend=backend, dynamic=True)
    return lambda *tensors: compiled(*tensors)
'''
