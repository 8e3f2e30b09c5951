"""Collects the logged values in a mutable default argument: a second call in the same process returns the first call's values too. (written blind, from the release alone)."""
CELL = 'train_logged'
KIND = 'state'
NOTE = "A mutable default argument lives across calls: each call must start its own list, or a second call returns the first call's values too."
FAILS = ['test_logged_collectives', 'test_logged_values']
SOURCE = '''
def train_logged(model, batches, optimizer, log_every, history=[]):
    """Train one step per batch; every log_every steps, the global per-sample mean loss, with one collective."""
    loss_sum, count = 0.0, 0
    for step, (x, y) in enumerate(batches, start=1):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        loss_sum += loss.item() * len(y)
        count += len(y)
        if step % log_every == 0 or step == len(batches):
            pair = torch.tensor([loss_sum, count], dtype=torch.float64)
            dist.all_reduce(pair)
            history.append(pair[0].item() / pair[1].item())
            loss_sum, count = 0.0, 0
    return history
'''
