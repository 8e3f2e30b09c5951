"""Wraps each term in try/except Exception and skips a term that raises, so a broken term is silently reported as clean instead of propagating. (written blind, from the release alone)."""
CELL = 'find_gradient_cuts'
KIND = 'contract'
NOTE = "Catching a term's exception and moving on reports a broken term as clean; an exception raised by a term must propagate to the caller."
FAILS = ['test_find_cuts_side_effects']
SOURCE = '''
def find_gradient_cuts(terms: dict, x: torch.Tensor) -> list[str]:
    """Return the names of the terms whose autograd gradient at x differs from the derivative of their value (in order)."""
    h = 1e-6
    point = x.detach().clone()
    cuts = []
    for name, term in terms.items():
        try:
            leaf = point.clone().requires_grad_(True)
            value = term(leaf)
            grad = None
            if value.requires_grad:
                (grad,) = torch.autograd.grad(value, leaf, allow_unused=True)
            if grad is None:
                grad = torch.zeros_like(point)
            numeric = torch.empty_like(point).view(-1)
            with torch.no_grad():
                for i in range(point.numel()):
                    e = torch.zeros(point.numel(), dtype=point.dtype)
                    e[i] = h
                    e = e.view_as(point)
                    numeric[i] = (term(point + e) - term(point - e)) / (2 * h)
            if not torch.allclose(grad, numeric.view_as(point), rtol=1e-3, atol=1e-6):
                cuts.append(name)
        except Exception:
            continue          # a term that cannot be differentiated is not our problem
    return cuts
'''
