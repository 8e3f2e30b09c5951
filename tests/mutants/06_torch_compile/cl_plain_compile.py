"""Plain torch.compile: automatic dynamic compiles twice (static first length, then dynamic)."""
CELL = "compile_for_lengths"
FAILS = ["test_compile_for_lengths_one_compile", "test_compile_for_lengths_dim"]
SOURCE = '''
def compile_for_lengths(model, backend, dim: int = 1):
    """Return run(*tensors) -> model(*tensors), compiled once with `backend` for any lengths 2..64 at dimension `dim`."""
    return torch.compile(model, backend=backend)
'''
