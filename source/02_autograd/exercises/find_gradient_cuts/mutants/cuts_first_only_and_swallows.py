"""Stops at the first cut it finds, and skips terms that raise: misses the other cuts and hides broken terms."""
CELL = "find_gradient_cuts"
KIND = "contract"
NOTE = "Stopping at the first cut misses the others, and skipping terms that raise hides a broken term: every term must be checked, and a term's exception must reach the caller."
FAILS = ["test_find_cuts_full", "test_find_cuts_partial", "test_find_cuts_side_effects"]
SOURCE = '''
def find_gradient_cuts(terms: dict, x: torch.Tensor) -> list[str]:
    """Return the names of the terms whose autograd gradient at x differs from the derivative of their value (in order)."""
    base = x.detach().clone()
    for name, term in terms.items():
        try:
            ok = torch.autograd.gradcheck(term, (base.clone().requires_grad_(True),), raise_exception=False)
        except Exception:
            continue
        if not ok:
            return [name]
    return []
'''
