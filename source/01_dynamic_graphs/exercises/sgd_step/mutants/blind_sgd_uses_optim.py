"""Delegates the step to torch.optim.SGD inside sgd_step (values are right, but the exercise forbids torch.optim). (written blind, from the release alone)."""
CELL = 'sgd_step'
KIND = 'contract'
NOTE = "The update is meant to be written by hand: delegating it to a torch.optim optimiser gives the right numbers but skips the exercise, which allows no optimiser."
FAILS = ['test_sgd_step_update']
SOURCE = '''
def sgd_step(params: list[torch.Tensor], loss_fn, lr: float, weight_decay: float = 0.0) -> float:
    """Discard stale grads, back-propagate loss_fn() once, update params in place, clear grads; return the loss."""
    opt = torch.optim.SGD(params, lr=lr, weight_decay=weight_decay)
    opt.zero_grad(set_to_none=True)
    loss = loss_fn()
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    return loss.item()
'''
