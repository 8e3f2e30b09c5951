"""Ignores the weight_decay argument: right for the default, wrong as soon as it is set."""
KIND = "wrong-value"
NOTE = "weight_decay is part of the step: it adds weight_decay times the parameter to its gradient. Ignoring it is right only for the default of 0."
CELL = "sgd_step"
FAILS = ["test_sgd_step_weight_decay", "test_sgd_step_edge_cases", "test_sgd_step_leaves"]
SOURCE = '''
def sgd_step(params, loss_fn, lr, weight_decay=0.0):
    for p in params:
        p.grad = None
    loss = loss_fn()
    loss.backward()
    with torch.no_grad():
        for p in params:
            if p.grad is not None:
                p -= lr * p.grad
                p.grad = None
    return loss.item()
'''
