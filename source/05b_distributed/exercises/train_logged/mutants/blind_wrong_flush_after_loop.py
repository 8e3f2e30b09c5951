"""Reduces at every multiple of log_every and then once more after the loop for the 'shorter last interval': when log_every divides len(batches) it logs an extra NaN interval (and issues one collective too many). (written blind, from the release alone)."""
CELL = 'train_logged'
KIND = 'edge-case'
NOTE = 'When log_every divides the number of steps, the last interval is already complete: flushing again after the loop adds an empty interval and one collective too many.'
FAILS = ['test_logged_collectives', 'test_logged_values']
SOURCE = '''
def train_logged(model, batches, optimizer, log_every):
    """Train one step per batch; every log_every steps, the global per-sample mean loss, with one collective."""
    logged = []
    totals = torch.zeros(2, dtype=torch.float64)

    def flush():
        dist.all_reduce(totals)
        logged.append((totals[0] / totals[1]).item())
        totals.zero_()

    for step, (x, y) in enumerate(batches, start=1):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        totals[0] += loss.item() * len(y)
        totals[1] += len(y)
        if step % log_every == 0:
            flush()
    flush()                    # the shorter last interval
    return logged
'''
