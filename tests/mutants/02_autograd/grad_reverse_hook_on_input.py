"""The independent students' miss: a reversing hook registered on the input x, and x itself returned."""
CELL = "grad_reverse"
FAILS = ["test_grad_reverse_forward", "test_grad_reverse_only_its_path"]
SOURCE = '''
def grad_reverse(x: torch.Tensor, lambd: float = 1.0) -> torch.Tensor:
    """Return x unchanged; on the way back its gradient is multiplied by -lambd."""
    if x.requires_grad:
        x.register_hook(lambda g: -lambd * g)
    return x
'''
