"""`p = p - lr * p.grad` rebinds the loop variable: the parameters never change."""
CELL = "sgd_step"
FAILS = ["test_sgd_step_update", "test_sgd_step_no_accumulation"]
SOURCE = '''
def sgd_step(params, loss_fn, lr):
    loss = loss_fn()
    loss.backward()
    with torch.no_grad():
        for p in params:
            g = p.grad
            p.grad = None
            p = p - lr * g
    return loss.item()
'''
