"""Correct: gradients from torch.autograd.grad (stale .grad never enters), fused in-place add_ with alpha=-lr, all .grad set to None. (written blind, from the release alone)."""
CELL = 'sgd_step'
SOURCE = '''
def sgd_step(params: list[torch.Tensor], loss_fn, lr: float, weight_decay: float = 0.0) -> float:
    """Discard stale grads, back-propagate loss_fn() once, update params in place, clear grads; return the loss."""
    loss = loss_fn()
    grads = torch.autograd.grad(loss, list(params), allow_unused=True)
    with torch.no_grad():
        for p, g in zip(params, grads):
            if g is not None:
                p.add_(g + weight_decay * p, alpha=-lr)
    for p in params:
        p.grad = None
    return float(loss.detach())
'''
