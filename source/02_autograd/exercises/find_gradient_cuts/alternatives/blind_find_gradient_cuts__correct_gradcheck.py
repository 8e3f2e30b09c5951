"""Correct: per term, torch.autograd.gradcheck on a fresh float64 leaf copy of x (autograd.grad inside, so no .grad anywhere), no exception caught. (written blind, from the release alone)."""
CELL = 'find_gradient_cuts'
SOURCE = '''
def find_gradient_cuts(terms: dict, x: torch.Tensor) -> list[str]:
    """Return the names of the terms whose autograd gradient at x differs from the derivative of their value (in order)."""
    point = x.detach().to(torch.float64).clone()
    cuts = []
    for name, term in terms.items():
        leaf = point.clone().requires_grad_(True)
        ok = torch.autograd.gradcheck(term, (leaf,), raise_exception=False)
        if not ok:
            cuts.append(name)
    return cuts
'''
