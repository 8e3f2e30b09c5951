"""Never clears the gradients: the next step (and a stale .grad) adds into this one."""
KIND = "graph"
NOTE = "backward() adds into .grad: without discarding stale gradients before it and clearing them after the step, old gradients are added into this step and into the next one."
CELL = "sgd_step"
FAILS = ["test_sgd_step_no_accumulation", "test_sgd_step_edge_cases", "test_sgd_step_leaves"]
SOURCE = '''
def sgd_step(params, loss_fn, lr, weight_decay=0.0):
    loss = loss_fn()
    loss.backward()
    with torch.no_grad():
        for p in params:
            if p.grad is not None:
                p -= lr * (p.grad + weight_decay * p)
    return loss.item()
'''
