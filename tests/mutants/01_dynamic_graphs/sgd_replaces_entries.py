"""Puts new leaf tensors into the list (params[i] = ...): the caller's tensors never change."""
CELL = "sgd_step"
FAILS = ["test_sgd_step_update", "test_sgd_step_weight_decay", "test_sgd_step_no_accumulation",
         "test_sgd_step_edge_cases", "test_sgd_step_leaves"]
SOURCE = '''
def sgd_step(params, loss_fn, lr, weight_decay=0.0):
    for p in params:
        p.grad = None
    loss = loss_fn()
    loss.backward()
    for i, p in enumerate(params):
        if p.grad is not None:
            params[i] = (p - lr * (p.grad + weight_decay * p)).detach().requires_grad_()
    return loss.item()
'''
