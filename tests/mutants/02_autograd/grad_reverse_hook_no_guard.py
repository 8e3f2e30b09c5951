"""A hook on a clone, registered unconditionally: raises for an x that does not require grad."""
CELL = "grad_reverse"
FAILS = ["test_grad_reverse_forward"]
SOURCE = '''
def grad_reverse(x: torch.Tensor, lambd: float = 1.0) -> torch.Tensor:
    """Return x unchanged; on the way back its gradient is multiplied by -lambd."""
    out = x.clone()
    out.register_hook(lambda g: -lambd * g)
    return out
'''
