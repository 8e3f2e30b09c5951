"""A mixed input with a small mean, built from a list (any input taking the other branch, other than -1s)."""
CELL = "divergent_input"
SOURCE = '''
def divergent_input() -> Tensor:
    """Return a float32 tensor of shape (4,) on which `traced_route` and `route` give different outputs."""
    return torch.tensor([-3.0, 0.5, 0.25, 1.0])
'''
