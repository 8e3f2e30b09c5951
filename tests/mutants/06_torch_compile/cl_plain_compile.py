"""Plain torch.compile(model, backend=backend): automatic dynamic compiles twice (static, then dynamic)."""
CELL = "compile_for_lengths"
FAILS = ["test_compile_for_lengths_one_compile"]
SOURCE = '''
def compile_for_lengths(model, backend):
    """Return `model` compiled with `backend` so that sequence lengths 8..64 (dim 1) cause one compilation."""
    return torch.compile(model, backend=backend)
'''
