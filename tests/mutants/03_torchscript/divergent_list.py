"""Returns a Python list instead of a tensor."""
CELL = "divergent_input"
FAILS = ["test_divergent_input_type", "test_divergent_input_differs"]
SOURCE = '''
def divergent_input() -> Tensor:
    """Return a float32 tensor of shape (4,) on which `traced_route` and `route` give different outputs."""
    return [0.0, 0.0, 0.0, 0.0]
'''
