"""Correct: per-interval local sums and counts in a list, one all_reduce of an (intervals, 2) float64 tensor at the end. (written blind, from the release alone)."""
CELL = 'train_logged'
SOURCE = '''
def train_logged(model, batches, optimizer, log_every):
    """Train one step per batch; every log_every steps, the global per-sample mean loss, with one collective."""
    per_interval = []
    for step, (x, y) in enumerate(batches):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        if step % log_every == 0:
            per_interval.append([0.0, 0.0])
        per_interval[-1][0] += loss.item() * len(y)
        per_interval[-1][1] += len(y)
    if not per_interval:
        return []
    stats = torch.tensor(per_interval, dtype=torch.float64)
    dist.all_reduce(stats)   # one collective for all the intervals of this call
    return [float(s / c) for s, c in stats.tolist()]
'''
