"""Takes the other branch with x = -1, where x * 2 == x - 1: the outputs still agree."""
CELL = "divergent_input"
FAILS = ["test_divergent_input_differs"]
SOURCE = '''
def divergent_input() -> Tensor:
    """Return a float32 tensor of shape (4,) on which `traced_route` and `route` give different outputs."""
    return -torch.ones(4)
'''
