"""Returns loss_fn() evaluated again after the update: a second call, and the wrong (new) value."""
KIND = "wrong-value"
NOTE = "The value to return is the loss that was back-propagated, from before the update; calling loss_fn() again runs it a second time and reports the updated parameters' loss."
CELL = "sgd_step"
FAILS = ["test_sgd_step_returns_float"]
SOURCE = '''
def sgd_step(params, loss_fn, lr, weight_decay=0.0):
    for p in params:
        p.grad = None
    loss_fn().backward()
    with torch.no_grad():
        for p in params:
            if p.grad is not None:
                p -= lr * (p.grad + weight_decay * p)
                p.grad = None
        return loss_fn().item()
'''
