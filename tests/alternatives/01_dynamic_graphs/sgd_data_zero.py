"""Updates through p.data.add_ and zeroes the gradients instead of deleting them."""
CELL = "sgd_step"
SOURCE = '''
def sgd_step(params, loss_fn, lr):
    for p in params:
        if p.grad is not None:
            p.grad.zero_()
    loss = loss_fn()
    grads = torch.autograd.grad(loss, params)
    with torch.no_grad():
        for p, g in zip(params, grads):
            p.add_(g, alpha=-lr)
    return float(loss.detach())
'''
