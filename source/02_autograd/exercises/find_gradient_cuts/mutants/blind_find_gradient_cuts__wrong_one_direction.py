"""Checks one directional derivative only (along the all-ones vector: grad.sum() vs one finite difference), so a cut whose error sums to zero over the elements is missed. (written blind, from the release alone)."""
CELL = 'find_gradient_cuts'
KIND = 'wrong-value'
NOTE = "A single summary of the gradient (its norm, or its slope along one direction) can match the true one while the gradient itself is wrong; compare the two element by element."
FAILS = ['test_find_cuts_partial']
SOURCE = '''
def find_gradient_cuts(terms: dict, x: torch.Tensor) -> list[str]:
    """Return the names of the terms whose autograd gradient at x differs from the derivative of their value (in order)."""
    h = 1e-6
    point = x.detach().clone()
    direction = torch.ones_like(point)
    cuts = []
    for name, term in terms.items():
        leaf = point.clone().requires_grad_(True)
        value = term(leaf)
        grad = None
        if value.requires_grad:
            (grad,) = torch.autograd.grad(value, leaf, allow_unused=True)
        autograd_slope = 0.0 if grad is None else (grad * direction).sum().item()
        with torch.no_grad():
            numeric_slope = ((term(point + h * direction) - term(point - h * direction)) / (2 * h)).item()
        if abs(autograd_slope - numeric_slope) > 1e-6 + 1e-3 * abs(numeric_slope):
            cuts.append(name)
    return cuts
'''
