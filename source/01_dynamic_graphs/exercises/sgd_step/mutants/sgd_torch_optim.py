"""Delegates to torch.optim.SGD (zero_grad, backward, step, zero_grad): right numbers, but the statement asks for the update written by hand."""
KIND = "contract"
NOTE = "The update is meant to be written by hand: delegating it to a torch.optim optimiser gives the right numbers but skips the exercise, which allows no optimiser."
CELL = "sgd_step"
FAILS = ["test_sgd_step_update"]
SOURCE = '''
def sgd_step(params, loss_fn, lr, weight_decay=0.0):
    opt = torch.optim.SGD(params, lr=lr, weight_decay=weight_decay)
    opt.zero_grad()
    loss = loss_fn()
    loss.backward()
    opt.step()
    opt.zero_grad()
    return loss.item()
'''
