"""Treats a missing gradient as zeros (written blind from the release): weight decay still shrinks a parameter the loss does not use."""
KIND = "edge-case"
NOTE = "A parameter the loss does not use has no gradient (None), which is not a zero gradient: treating it as zeros lets weight decay shrink a parameter the loss never touched."
CELL = "sgd_step"
FAILS = ["test_sgd_step_edge_cases"]
SOURCE = '''
def sgd_step(params, loss_fn, lr, weight_decay=0.0):
    for p in params:
        p.grad = None
    loss = loss_fn()
    loss.backward()
    with torch.no_grad():
        for p in params:
            g = p.grad if p.grad is not None else torch.zeros_like(p)
            p -= lr * (g + weight_decay * p)
            p.grad = None
    return loss.item()
'''
