"""A random input shifted far below the threshold (different values on every call)."""
CELL = "divergent_input"
SOURCE = '''
def divergent_input() -> Tensor:
    """Return a float32 tensor of shape (4,) on which `traced_route` and `route` give different outputs."""
    return torch.rand(4) - 5.0
'''
