"""Discards stale grads with grad.zero_() (a zero tensor, not None): an unused parameter with a stale grad then takes the weight-decay step. (written blind, from the release alone)."""
CELL = 'sgd_step'
KIND = 'edge-case'
NOTE = "Zeroing a stale .grad in place leaves a zero tensor, not 'no gradient': a parameter the loss does not use then looks as if it had one, and weight decay moves it."
FAILS = ['test_sgd_step_edge_cases']
SOURCE = '''
def sgd_step(params: list[torch.Tensor], loss_fn, lr: float, weight_decay: float = 0.0) -> float:
    """Discard stale grads, back-propagate loss_fn() once, update params in place, clear grads; return the loss."""
    for p in params:
        if p.grad is not None:
            p.grad.zero_()                  # discard stale gradients, like optimizer.zero_grad(set_to_none=False)
    loss = loss_fn()
    loss.backward()
    with torch.no_grad():
        for p in params:
            if p.grad is None:
                continue
            p -= lr * (p.grad + weight_decay * p)
            p.grad.zero_()
    return loss.item()
'''
