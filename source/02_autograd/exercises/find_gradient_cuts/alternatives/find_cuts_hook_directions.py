"""A hook on a fresh leaf catches autograd's gradient; compared with directional finite differences along random directions."""
CELL = "find_gradient_cuts"
SOURCE = '''
def find_gradient_cuts(terms: dict, x: torch.Tensor) -> list[str]:
    """Return the names of the terms whose autograd gradient at x differs from the derivative of their value (in order)."""
    gen = torch.Generator().manual_seed(1234)
    directions = [torch.randn(x.shape, generator=gen, dtype=torch.float64) for _ in range(3)]
    point = x.detach().to(torch.float64)
    found = []
    for name, term in terms.items():
        caught = []
        leaf = point.clone().requires_grad_(True)
        leaf.register_hook(lambda g: caught.append(g))
        out = term(leaf)
        if out.requires_grad and out.grad_fn is not None:
            try:
                out.backward(inputs=[leaf])
            except RuntimeError:
                pass
        grad = caught[0] if caught else torch.zeros_like(point)
        bad = False
        for d in directions:
            h = 1e-5
            with torch.no_grad():
                numeric = float((term(point + h * d) - term(point - h * d)) / (2 * h))
            analytic = float((grad * d).sum())
            if abs(analytic - numeric) > 1e-4 * max(1.0, abs(numeric)):
                bad = True
        if bad:
            found.append(name)
    return found
'''
