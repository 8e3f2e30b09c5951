"""Clears .grad after the update but not before backward(): a stale gradient from earlier code enters the step."""
CELL = "sgd_step"
FAILS = ["test_sgd_step_edge_cases"]
SOURCE = '''
def sgd_step(params, loss_fn, lr, weight_decay=0.0):
    loss = loss_fn()
    loss.backward()
    with torch.no_grad():
        for p in params:
            if p.grad is not None:
                p -= lr * (p.grad + weight_decay * p)
                p.grad = None
    return loss.item()
'''
