"""Returns an input that takes the traced branch (mean > 0.5), so traced and eager agree."""
CELL = "divergent_input"
FAILS = ["test_divergent_input_differs"]
SOURCE = '''
def divergent_input() -> Tensor:
    """Return a float32 tensor of shape (4,) on which `traced_route` and `route` give different outputs."""
    return torch.full((4,), 2.0)
'''
