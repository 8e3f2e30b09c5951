"""Zeroes stale gradients in place (zero_grad(set_to_none=False)): an unused parameter that held one then has a zero gradient, not None, and weight decay shrinks it (issue 19)."""
KIND = "edge-case"
NOTE = "Zeroing a stale .grad in place leaves a zero tensor, not 'no gradient': a parameter the loss does not use then looks as if it had one, and weight decay moves it."
CELL = "sgd_step"
FAILS = ["test_sgd_step_edge_cases"]
SOURCE = '''
def sgd_step(params, loss_fn, lr, weight_decay=0.0):
    for p in params:
        if p.grad is not None:
            p.grad.zero_()
    loss = loss_fn()
    loss.backward()
    with torch.no_grad():
        for p in params:
            if p.grad is not None:
                p -= lr * (p.grad + weight_decay * p)
                p.grad.zero_()
    return loss.item()
'''
