"""Returns the loss tensor instead of a Python float (keeps the graph alive when logged)."""
CELL = "sgd_step"
FAILS = ["test_sgd_step_returns_float"]
SOURCE = '''
def sgd_step(params, loss_fn, lr):
    loss = loss_fn()
    loss.backward()
    with torch.no_grad():
        for p in params:
            p -= lr * p.grad
            p.grad = None
    return loss
'''
