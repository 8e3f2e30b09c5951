"""Flags only terms whose gradient is missing or zero (with a value that changes): a wrong nonzero gradient passes."""
CELL = "find_gradient_cuts"
KIND = "wrong-value"
NOTE = "A cut does not always zero the gradient: cut on one of several paths, the gradient is nonzero but wrong. Compare autograd's gradient with the derivative of the values, not with zero."
FAILS = ['test_find_cuts_partial', 'test_find_cuts_segmentation', 'test_find_cuts_side_effects']
SOURCE = '''
def find_gradient_cuts(terms: dict, x: torch.Tensor) -> list[str]:
    """Return the names of the terms whose autograd gradient at x differs from the derivative of their value (in order)."""
    cuts = []
    base = x.detach().clone()
    for name, term in terms.items():
        leaf = base.clone().requires_grad_(True)
        value = term(leaf)
        grad = None
        if value.requires_grad:
            (grad,) = torch.autograd.grad(value, leaf, allow_unused=True)
        if grad is not None and bool((grad != 0).any()):
            continue
        numeric = torch.zeros_like(base)
        flat = numeric.view(-1)
        with torch.no_grad():
            for i in range(base.numel()):
                e = torch.zeros_like(base).view(-1)
                e[i] = 1e-6
                e = e.view_as(base)
                flat[i] = (term(base + e) - term(base - e)) / 2e-6
        if bool((numeric.abs() > 1e-6).any()):
            cuts.append(name)
    return cuts
'''
