"""Averages the per-step losses of an interval on each rank, then weights that local mean by the rank's samples: wrong when batch sizes differ inside an interval. (written blind, from the release alone)."""
CELL = 'train_logged'
KIND = 'wrong-value'
NOTE = 'A mean of per-step means is not a per-sample mean when batch sizes differ: sum loss times batch size and divide by the samples seen on all ranks.'
FAILS = ['test_logged_collectives', 'test_logged_values']
SOURCE = '''
def train_logged(model, batches, optimizer, log_every):
    """Train one step per batch; every log_every steps, the global per-sample mean loss, with one collective."""
    logged = []
    losses, samples = [], 0
    for step, (x, y) in enumerate(batches, start=1):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        samples += len(y)
        if step % log_every == 0 or step == len(batches):
            local_mean = sum(losses) / len(losses)          # this rank's mean loss over the interval
            pair = torch.tensor([local_mean * samples, samples], dtype=torch.float64)
            dist.all_reduce(pair)                           # weight each rank by its samples
            logged.append((pair[0] / pair[1]).item())
            losses, samples = [], 0
    return logged
'''
