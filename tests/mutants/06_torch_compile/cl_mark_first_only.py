"""Marks only the first input: the mask's length is tied to it, so Dynamo specialises it and mark_dynamic raises."""
CELL = "compile_for_lengths"
FAILS = ["test_compile_for_lengths_one_compile", "test_compile_for_lengths_dim", "test_compile_for_lengths_outputs"]
SOURCE = '''
def compile_for_lengths(model, backend, dim: int = 1):
    """Return run(*tensors) -> model(*tensors), compiled once with `backend` for any lengths 2..64 at dimension `dim`."""
    compiled = torch.compile(model, backend=backend)

    def run(*tensors):
        torch._dynamo.mark_dynamic(tensors[0], dim)
        return compiled(*tensors)

    return run
'''
