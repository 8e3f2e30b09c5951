"""Nudges the caller's x in place through .data (+h, -2h, +h) for the finite differences: x's values drift by rounding (not bit-identical afterwards), and .data hides the change from the version counter, so a graph that saved x silently uses the drifted values. (written blind, from the release alone)."""
CELL = 'find_gradient_cuts'
KIND = 'mutation'
NOTE = "Nudging the caller's x in place for finite differences changes it: +h and -h steps do not round back to the same bits, and writes through .data are hidden from autograd. Nudge a copy you own."
FAILS = ['test_find_cuts_side_effects']
SOURCE = '''
def find_gradient_cuts(terms: dict, x: torch.Tensor) -> list[str]:
    """Return the names of the terms whose autograd gradient at x differs from the derivative of their value (in order)."""
    h = 1e-6
    cuts = []
    flat = x.data.view(-1)
    for name, term in terms.items():
        leaf = x.detach().clone().requires_grad_(True)
        value = term(leaf)
        grad = None
        if value.requires_grad:
            (grad,) = torch.autograd.grad(value, leaf, allow_unused=True)
        if grad is None:
            grad = torch.zeros_like(leaf)
        numeric = torch.empty(flat.numel(), dtype=torch.float64)
        with torch.no_grad():
            for i in range(flat.numel()):
                flat[i] += h
                up = term(x.detach()).item()
                flat[i] -= 2 * h
                down = term(x.detach()).item()
                flat[i] += h                      # back to where we started
                numeric[i] = (up - down) / (2 * h)
        if not torch.allclose(grad.reshape(-1), numeric, rtol=1e-3, atol=1e-6):
            cuts.append(name)
    return cuts
'''
