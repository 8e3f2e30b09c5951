"""Treats a missing gradient as zeros and still applies weight decay: an unused parameter shrinks when weight_decay > 0. (written blind, from the release alone)."""
CELL = 'sgd_step'
KIND = 'edge-case'
NOTE = "A parameter the loss does not use has no gradient (None), which is not a zero gradient: treating it as zeros lets weight decay shrink a parameter the loss never touched."
FAILS = ['test_sgd_step_edge_cases']
SOURCE = '''
def sgd_step(params: list[torch.Tensor], loss_fn, lr: float, weight_decay: float = 0.0) -> float:
    """Discard stale grads, back-propagate loss_fn() once, update params in place, clear grads; return the loss."""
    for p in params:
        p.grad = None
    loss = loss_fn()
    loss.backward()
    with torch.no_grad():
        for p in params:
            g = p.grad if p.grad is not None else torch.zeros_like(p)   # no gradient = zero gradient
            p.sub_(lr * (g + weight_decay * p))
            p.grad = None
    return loss.item()
'''
