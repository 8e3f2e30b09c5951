"""torch.autograd.grad without allow_unused=True: crashes on a term that requires grad through other tensors only."""
CELL = "find_gradient_cuts"
FAILS = ["test_find_cuts_no_false_alarms"]
SOURCE = '''
def find_gradient_cuts(terms: dict, x: torch.Tensor) -> list[str]:
    """Return the names of the terms whose autograd gradient at x differs from the derivative of their value (in order)."""
    cuts = []
    base = x.detach().clone()
    for name, term in terms.items():
        leaf = base.clone().requires_grad_(True)
        value = term(leaf)
        grad = torch.autograd.grad(value, leaf)[0] if value.requires_grad else torch.zeros_like(base)
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
