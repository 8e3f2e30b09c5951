"""A tensor hook on a clone instead of an autograd.Function."""
CELL = "grad_reverse"
SOURCE = '''
def grad_reverse(x: torch.Tensor, lambd: float = 1.0) -> torch.Tensor:
    """Return x unchanged; on the way back its gradient is multiplied by -lambd."""
    out = x.clone()
    if out.requires_grad:
        out.register_hook(lambda g: g * (-lambd))
    return out
'''
