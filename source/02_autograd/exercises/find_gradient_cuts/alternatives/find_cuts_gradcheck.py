"""torch.autograd.gradcheck per term, each on a fresh leaf copy of x."""
CELL = "find_gradient_cuts"
SOURCE = '''
def find_gradient_cuts(terms: dict, x: torch.Tensor) -> list[str]:
    """Return the names of the terms whose autograd gradient at x differs from the derivative of their value (in order)."""
    return [name for name, term in terms.items()
            if not torch.autograd.gradcheck(term, (x.detach().clone().requires_grad_(True),), raise_exception=False)]
'''
