"""maybe_mark_dynamic on every input, with dynamic=None, in a small class with __call__."""
CELL = "compile_for_lengths"
SOURCE = '''
class _LengthRunner:
    def __init__(self, compiled, dim):
        self.compiled, self.dim = compiled, dim

    def __call__(self, *tensors):
        for t in tensors:
            torch._dynamo.maybe_mark_dynamic(t, self.dim)
        return self.compiled(*tensors)


def compile_for_lengths(model, backend, dim: int = 1):
    """Return run(*tensors) -> model(*tensors), compiled once with `backend` for any lengths 2..64 at dimension `dim`."""
    return _LengthRunner(torch.compile(model, backend=backend, dynamic=None), dim)
'''
