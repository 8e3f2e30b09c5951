"""A barrier to 'line the ranks up' plus one all_reduce of all intervals at the end: 2 collectives, too many when there is a single interval. (written blind, from the release alone)."""
CELL = 'train_logged'
KIND = 'contract'
NOTE = "A barrier is a collective too and counts like any other: nothing here needs the ranks lined up, so it only adds a meeting (two collectives where a single interval allows one)."
FAILS = ['test_logged_collectives']
SOURCE = '''
def train_logged(model, batches, optimizer, log_every):
    """Train one step per batch; every log_every steps, the global per-sample mean loss, with one collective."""
    dist.barrier()  # make sure every rank starts together
    sums, counts = [], []
    for step, (x, y) in enumerate(batches):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        if step % log_every == 0:
            sums.append(0.0)
            counts.append(0)
        sums[-1] += loss.item() * len(y)
        counts[-1] += len(y)
    stats = torch.tensor([sums, counts], dtype=torch.float64)
    dist.all_reduce(stats)          # one reduction for the whole run
    return [(s / c).item() for s, c in zip(stats[0], stats[1])]
'''
