"""Compares the norm of autograd's gradient with the norm of the finite differences: a gradient of the right size but the wrong sign passes."""
CELL = "find_gradient_cuts"
KIND = "wrong-value"
NOTE = "A single summary of the gradient (its norm, or its slope along one direction) can match the true one while the gradient itself is wrong; compare the two element by element."
FAILS = ['test_find_cuts_partial']
SOURCE = '''
def find_gradient_cuts(terms, x):
    out = []
    base = x.detach().clone()
    for name, term in terms.items():
        leaf = base.clone().requires_grad_(True)
        v = term(leaf)
        g = torch.autograd.grad(v, leaf, allow_unused=True)[0] if v.requires_grad else None
        g = torch.zeros_like(base) if g is None else g
        num = torch.zeros_like(base).view(-1)
        with torch.no_grad():
            for i in range(base.numel()):
                e = torch.zeros_like(base).view(-1); e[i] = 1e-6; e = e.view_as(base)
                num[i] = (term(base + e) - term(base - e)) / 2e-6
        if abs(g.norm() - num.norm()) > 1e-4 * (1 + num.norm()):
            out.append(name)
    return out
'''
