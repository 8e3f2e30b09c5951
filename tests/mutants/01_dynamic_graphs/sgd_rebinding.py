"""`p = p - lr * g` rebinds the loop variable: the parameters never change."""
CELL = "sgd_step"
FAILS = ["test_sgd_step_update", "test_sgd_step_weight_decay", "test_sgd_step_returns_float",
         "test_sgd_step_no_accumulation", "test_sgd_step_edge_cases"]
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
                p = p - lr * (g + weight_decay * p)
    return loss.item()
'''
