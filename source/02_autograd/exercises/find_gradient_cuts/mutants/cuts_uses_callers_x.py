"""Differentiates with respect to the caller's x itself (requires_grad_ and backward on it): right answers, but x is changed."""
CELL = "find_gradient_cuts"
KIND = "mutation"
NOTE = "Making the caller's x require grad and differentiating through it changes the caller's tensor; take gradients at a fresh leaf copy that the tool owns, and leave x exactly as it was."
FAILS = ["test_find_cuts_side_effects"]
SOURCE = '''
def find_gradient_cuts(terms: dict, x: torch.Tensor) -> list[str]:
    """Return the names of the terms whose autograd gradient at x differs from the derivative of their value (in order)."""
    cuts = []
    base = x.detach().clone()
    x.requires_grad_(True)
    for name, term in terms.items():
        x.grad = None
        value = term(x)
        if value.requires_grad:
            value.backward()
        grad = x.grad if x.grad is not None else torch.zeros_like(base)
        numeric = torch.zeros_like(base)
        flat = numeric.view(-1)
        with torch.no_grad():
            for i in range(base.numel()):
                e = torch.zeros_like(base).view(-1)
                e[i] = 1e-6
                e = e.view_as(base)
                flat[i] = (term(base + e) - term(base - e)) / 2e-6
        if not torch.allclose(grad, numeric, rtol=1e-3, atol=1e-6):
            cuts.append(name)
    return cuts
'''
