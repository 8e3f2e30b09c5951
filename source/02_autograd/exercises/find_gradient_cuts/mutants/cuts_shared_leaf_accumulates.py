"""One leaf for all terms and term(leaf).backward() each time, never cleared: later terms see the earlier gradients too."""
CELL = "find_gradient_cuts"
KIND = "state"
NOTE = "backward() adds into .grad, so one leaf reused for every term accumulates earlier terms' gradients into later ones; each term's gradient must be measured on its own."
FAILS = ['test_find_cuts_full', 'test_find_cuts_no_false_alarms', 'test_find_cuts_partial', 'test_find_cuts_segmentation', 'test_find_cuts_side_effects']
SOURCE = '''
def find_gradient_cuts(terms: dict, x: torch.Tensor) -> list[str]:
    """Return the names of the terms whose autograd gradient at x differs from the derivative of their value (in order)."""
    cuts = []
    base = x.detach().clone()
    leaf = base.clone().requires_grad_(True)
    for name, term in terms.items():
        value = term(leaf)
        if value.requires_grad:
            value.backward()
        grad = leaf.grad if leaf.grad is not None else torch.zeros_like(base)
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
