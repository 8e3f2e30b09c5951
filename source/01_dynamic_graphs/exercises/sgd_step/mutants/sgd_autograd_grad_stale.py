"""Takes the gradients with torch.autograd.grad and never touches .grad: a stale .grad from earlier code is still there afterwards (issue 19)."""
KIND = "state"
NOTE = "torch.autograd.grad returns this loss's gradients without touching .grad, so a stale .grad from earlier code is still there afterwards; the step must leave no gradient behind on any parameter."
CELL = "sgd_step"
FAILS = ["test_sgd_step_no_accumulation"]
SOURCE = '''
def sgd_step(params, loss_fn, lr, weight_decay=0.0):
    loss = loss_fn()
    grads = torch.autograd.grad(loss, params, allow_unused=True)
    with torch.no_grad():
        for p, g in zip(params, grads):
            if g is not None:
                p -= lr * (g + weight_decay * p)
    return loss.item()
'''
