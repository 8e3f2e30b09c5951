"""Clears with set_to_none before and after, and writes the new value with copy_ under no_grad."""
CELL = "sgd_step"
SOURCE = '''
def sgd_step(params, loss_fn, lr, weight_decay=0.0):
    for p in params:
        p.grad = None
    loss = loss_fn()
    loss.backward()
    with torch.no_grad():
        for p in params:
            g = p.grad
            p.grad = None
            if g is not None:
                p.copy_(p - lr * (g + weight_decay * p))
    return float(loss)
'''
