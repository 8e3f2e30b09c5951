"""The detach trick: x + c * (x - x.detach()) is x in value, with derivative 1 + c = -lambd."""
CELL = "grad_reverse"
SOURCE = '''
def grad_reverse(x: torch.Tensor, lambd: float = 1.0) -> torch.Tensor:
    """Return x unchanged; on the way back its gradient is multiplied by -lambd."""
    return x + (-lambd - 1.0) * (x - x.detach())
'''
