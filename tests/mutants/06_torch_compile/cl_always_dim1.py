"""Ignores the dim argument and always marks dimension 1."""
CELL = "compile_for_lengths"
FAILS = ["test_compile_for_lengths_dim"]
SOURCE = '''
def compile_for_lengths(model, backend, dim: int = 1):
    """Return run(*tensors) -> model(*tensors), compiled once with `backend` for any lengths 2..64 at dimension `dim`."""
    compiled = torch.compile(model, backend=backend)

    def run(*tensors):
        for t in tensors:
            torch._dynamo.mark_dynamic(t, 1)
        return compiled(*tensors)

    return run
'''
