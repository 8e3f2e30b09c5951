"""Marks the caller's x as requiring grad in place (x.requires_grad_(True)) when it does not, and never switches it back. (written blind, from the release alone)."""
CELL = 'find_gradient_cuts'
KIND = 'mutation'
NOTE = "Making the caller's x require grad and differentiating through it changes the caller's tensor; take gradients at a fresh leaf copy that the tool owns, and leave x exactly as it was."
FAILS = ['test_find_cuts_side_effects']
SOURCE = '''
def find_gradient_cuts(terms: dict, x: torch.Tensor) -> list[str]:
    """Return the names of the terms whose autograd gradient at x differs from the derivative of their value (in order)."""
    if not x.requires_grad:
        x.requires_grad_(True)
    h = 1e-6
    cuts = []
    for name, term in terms.items():
        value = term(x)
        if value.requires_grad:
            (grad,) = torch.autograd.grad(value, x, allow_unused=True)
            grad = torch.zeros_like(x) if grad is None else grad
        else:
            grad = torch.zeros_like(x)
        numeric = torch.zeros_like(x)
        with torch.no_grad():
            base = x.detach()
            for i in range(base.numel()):
                e = torch.zeros_like(base).view(-1)
                e[i] = 1.0
                e = e.view_as(base)
                numeric.view(-1)[i] = (term(base + h * e) - term(base - h * e)) / (2 * h)
        if not torch.allclose(grad, numeric, rtol=1e-3, atol=1e-6):
            cuts.append(name)
    return cuts
'''
