"""torch.allclose with a relative tolerance only (atol=0): a clean term whose derivative is exactly 0 somewhere is reported, since finite differences give about 1e-12 there."""
CELL = "find_gradient_cuts"
KIND = "edge-case"
NOTE = "A purely relative tolerance fails where the true derivative is 0: finite differences give rounding noise there that no relative bound accepts, so a clean term is reported."
FAILS = ['test_find_cuts_no_false_alarms']
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
        if not torch.allclose(g, num.view_as(base), rtol=1e-4, atol=0.0):
            out.append(name)
    return out
'''
