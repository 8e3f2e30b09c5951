"""A fresh leaf per term, but term(leaf).backward() to get the gradient: right answers, and every parameter or weight tensor the terms use gets a .grad."""
CELL = "find_gradient_cuts"
KIND = "mutation"
NOTE = "backward() adds into .grad of every leaf a term uses, its weights included, so the check changes tensors it does not own; the gradient must be obtained without storing it anywhere."
FAILS = ['test_find_cuts_side_effects']
SOURCE = '''
def find_gradient_cuts(terms: dict, x: torch.Tensor) -> list[str]:
    """Return the names of the terms whose autograd gradient at x differs from the derivative of their value (in order)."""
    cuts = []
    base = x.detach().clone()
    step = 1e-6
    for name, term in terms.items():
        leaf = base.clone().requires_grad_(True)
        value = term(leaf)
        if value.requires_grad:
            value.backward()
        grad = leaf.grad if leaf.grad is not None else torch.zeros_like(base)
        numeric = torch.zeros_like(base).view(-1)
        with torch.no_grad():
            for i in range(base.numel()):
                e = torch.zeros_like(base).view(-1)
                e[i] = step
                e = e.view_as(base)
                numeric[i] = (term(base + e) - term(base - e)) / (2 * step)
        if not torch.allclose(grad, numeric.view_as(base), rtol=1e-3, atol=1e-6):
            cuts.append(name)
    return cuts
'''
