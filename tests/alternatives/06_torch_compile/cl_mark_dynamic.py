"""Marks dimension 1 of every input dynamic with torch._dynamo.mark_dynamic before calling the compiled model."""
CELL = "compile_for_lengths"
SOURCE = '''
def compile_for_lengths(model, backend):
    """Return `model` compiled with `backend` so that sequence lengths 8..64 (dim 1) cause one compilation."""
    compiled = torch.compile(model, backend=backend)

    def run(x):
        torch._dynamo.mark_dynamic(x, 1)
        return compiled(x)

    return run
'''
