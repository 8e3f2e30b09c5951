"""Flags a term when its value does not require grad: misses every partial cut, and calls a constant a cut."""
CELL = "find_gradient_cuts"
FAILS = ["test_find_cuts_full", "test_find_cuts_partial", "test_find_cuts_no_false_alarms", "test_find_cuts_segmentation"]
SOURCE = '''
def find_gradient_cuts(terms: dict, x: torch.Tensor) -> list[str]:
    """Return the names of the terms whose autograd gradient at x differs from the derivative of their value (in order)."""
    leaf = x.detach().clone().requires_grad_(True)
    return [name for name, term in terms.items() if not term(leaf).requires_grad]
'''
