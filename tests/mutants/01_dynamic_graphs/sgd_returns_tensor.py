"""Returns the loss tensor instead of a Python float (keeps the graph alive when logged)."""
CELL = "sgd_step"
FAILS = ["test_sgd_step_returns_float"]
SOURCE = '''
def sgd_step(params, loss_fn, lr, weight_decay=0.0):
    for p in params:
        p.grad = None
    loss = loss_fn()
    loss.backward()
    with torch.no_grad():
        for p in params:
            if p.grad is not None:
                p -= lr * (p.grad + weight_decay * p)
                p.grad = None
    return loss
'''
