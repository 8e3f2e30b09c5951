"""mark_dynamic with the promised range (min=2, max=64) on every input, and dynamic=True as well."""
CELL = "compile_for_lengths"
SOURCE = '''
def compile_for_lengths(model, backend, dim: int = 1):
    """Return run(*tensors) -> model(*tensors), compiled once with `backend` for any lengths 2..64 at dimension `dim`."""
    compiled = torch.compile(model, backend=backend, dynamic=True)

    def run(*tensors):
        for t in tensors:
            torch._dynamo.mark_dynamic(t, dim, min=2, max=64)
        return compiled(*tensors)

    return run
'''
