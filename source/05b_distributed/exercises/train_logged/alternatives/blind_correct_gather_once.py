"""Keeps per-interval local [sum, count] rows, then one all_gather_into_tensor of the whole table at the end (one collective per call). (written blind, from the release alone)."""
CELL = 'train_logged'
SOURCE = '''
def train_logged(model, batches, optimizer, log_every):
    """Train one step per batch; every log_every steps, the global per-sample mean loss, with one collective."""
    n_intervals = -(-len(batches) // log_every)           # ceil
    table = torch.zeros(n_intervals, 2, dtype=torch.float64)
    for i, (x, y) in enumerate(batches):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        table[i // log_every, 0] += loss.item() * y.numel()
        table[i // log_every, 1] += y.numel()
    if n_intervals == 0:
        return []
    world = dist.get_world_size()
    everyone = torch.empty(world * n_intervals, 2, dtype=torch.float64)
    dist.all_gather_into_tensor(everyone, table)          # the only collective of the call
    totals = everyone.view(world, n_intervals, 2).sum(0)
    return [(s / c).item() for s, c in totals]
'''
