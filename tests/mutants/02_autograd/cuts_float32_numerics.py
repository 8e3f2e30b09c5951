"""Finite differences in float32 with a 1e-6 step: rounding swamps the derivative, so clean terms look cut."""
CELL = "find_gradient_cuts"
FAILS = ["test_find_cuts_full", "test_find_cuts_partial", "test_find_cuts_no_false_alarms", "test_find_cuts_segmentation"]
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
        if grad is None:
            grad = torch.zeros_like(base)
        low = base.float()
        numeric = torch.zeros_like(low)
        flat = numeric.view(-1)
        with torch.no_grad():
            for i in range(low.numel()):
                e = torch.zeros_like(low).view(-1)
                e[i] = 1e-6
                e = e.view_as(low)
                flat[i] = (term(low + e).float() - term(low - e).float()) / 2e-6
        if not torch.allclose(grad.float(), numeric, rtol=1e-3, atol=1e-6):
            cuts.append(name)
    return cuts
'''
