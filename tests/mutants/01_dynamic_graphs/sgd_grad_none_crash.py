"""Assumes every parameter has a gradient: a parameter the loss does not use makes it raise TypeError."""
KIND = "edge-case"
CELL = "sgd_step"
FAILS = ["test_sgd_step_edge_cases", "test_sgd_step_no_accumulation"]
SOURCE = '''
def sgd_step(params, loss_fn, lr, weight_decay=0.0):
    for p in params:
        p.grad = None
    loss = loss_fn()
    loss.backward()
    with torch.no_grad():
        for p in params:
            p -= lr * (p.grad + weight_decay * p)
            p.grad = None
    return loss.item()
'''
