"""Calls every term once (so a broken term still raises) and reports no cut."""
CELL = "find_gradient_cuts"
KIND = "do-nothing"
NOTE = "The answer does not do the work the statement asks for yet: it reports no cut for any term."
FAILS = ['test_find_cuts_full', 'test_find_cuts_partial', 'test_find_cuts_no_false_alarms', 'test_find_cuts_segmentation', 'test_find_cuts_side_effects']
SOURCE = '''
def find_gradient_cuts(terms: dict, x: torch.Tensor) -> list[str]:
    """Return the names of the terms whose autograd gradient at x differs from the derivative of their value (in order)."""
    for term in terms.values():
        term(x.detach().clone())
    return []
'''
