"""Never clears the gradients: the second step uses the sum of both gradients."""
CELL = "sgd_step"
FAILS = ["test_sgd_step_no_accumulation"]
SOURCE = '''
def sgd_step(params, loss_fn, lr):
    loss = loss_fn()
    loss.backward()
    with torch.no_grad():
        for p in params:
            p -= lr * p.grad
    return loss.item()
'''
