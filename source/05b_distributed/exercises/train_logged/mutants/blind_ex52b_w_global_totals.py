"""Keeps the running totals in module-level globals and does not reset them after the last (short) interval: a second call mixes in the first call's leftover steps. (written blind, from the release alone)."""
CELL = 'train_logged'
KIND = 'state'
NOTE = "Running totals kept outside the function survive between calls: what one call leaves in them is mixed into the next call's first interval. Each call must log only its own steps."
FAILS = ['test_logged_collectives', 'test_logged_values']
SOURCE = '''
_LOG_STATE = {"loss_sum": 0.0, "count": 0}   # running totals of the current interval

def train_logged(model, batches, optimizer, log_every):
    """Train one step per batch; every log_every steps, the global per-sample mean loss, with one collective."""
    logged = []
    for step, (x, y) in enumerate(batches, 1):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        _LOG_STATE["loss_sum"] += loss.item() * len(y)
        _LOG_STATE["count"] += len(y)
        if step % log_every == 0 or step == len(batches):
            stats = torch.tensor([_LOG_STATE["loss_sum"], _LOG_STATE["count"]], dtype=torch.float64)
            dist.all_reduce(stats)
            logged.append((stats[0] / stats[1]).item())
            if step % log_every == 0:          # a full interval is done: start the next one
                _LOG_STATE["loss_sum"], _LOG_STATE["count"] = 0.0, 0
    return logged
'''
