"""torch.autograd.grad with allow_unused (no .grad involved), updates through p.add_, zeroes stale grads in place."""
CELL = "sgd_step"
SOURCE = '''
def sgd_step(params, loss_fn, lr, weight_decay=0.0):
    loss = loss_fn()
    grads = torch.autograd.grad(loss, params, allow_unused=True)
    with torch.no_grad():
        for p, g in zip(params, grads):
            if p.grad is not None:
                p.grad.zero_()
            if g is None:
                continue
            if weight_decay:
                g = g.add(p, alpha=weight_decay)
            p.add_(g, alpha=-lr)
    return float(loss.detach())
'''
