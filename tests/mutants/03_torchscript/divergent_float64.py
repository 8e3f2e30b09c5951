"""Right values in the wrong dtype: a float64 tensor, while the tracing example (and the statement) is float32."""
CELL = "divergent_input"
FAILS = ["test_divergent_input_type", "test_divergent_input_differs"]
SOURCE = '''
def divergent_input() -> Tensor:
    """Return a float32 tensor of shape (4,) on which `traced_route` and `route` give different outputs."""
    return torch.zeros(4, dtype=torch.float64)
'''
