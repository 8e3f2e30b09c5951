"""Marks the inputs but calls the uncompiled model: nothing is ever compiled."""
CELL = "compile_for_lengths"
FAILS = ["test_compile_for_lengths_one_compile", "test_compile_for_lengths_dim"]
SOURCE = '''
def compile_for_lengths(model, backend, dim: int = 1):
    """Return run(*tensors) -> model(*tensors), compiled once with `backend` for any lengths 2..64 at dimension `dim`."""
    compiled = torch.compile(model, backend=backend)

    def run(*tensors):
        for t in tensors:
            torch._dynamo.mark_dynamic(t, dim)
        return model(*tensors)

    return run
'''
