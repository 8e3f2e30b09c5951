"""Uses torch.autograd.grad and never touches .grad: a stale .grad from before the call is still there afterwards. (written blind, from the release alone)."""
CELL = 'sgd_step'
KIND = 'contract'
NOTE = "torch.autograd.grad returns this loss's gradients without touching .grad, so a stale .grad from earlier code is still there afterwards; the step must leave no gradient behind on any parameter."
FAILS = ['test_sgd_step_no_accumulation']
SOURCE = '''
def sgd_step(params: list[torch.Tensor], loss_fn, lr: float, weight_decay: float = 0.0) -> float:
    """Discard stale grads, back-propagate loss_fn() once, update params in place, clear grads; return the loss."""
    loss = loss_fn()
    # autograd.grad returns only this loss's gradients, so whatever sits in .grad is ignored
    grads = torch.autograd.grad(loss, params, allow_unused=True)
    with torch.no_grad():
        for p, g in zip(params, grads):
            if g is None:
                continue
            p.sub_(lr * (g + weight_decay * p))
    return loss.item()
'''
