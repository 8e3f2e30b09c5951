"""Keeps the running totals in module-level variables that are never reset between calls: a second call mixes in the first call's steps."""
CELL = "train_logged"
KIND = "state"
NOTE = "Running totals kept outside the function survive between calls: what one call leaves in them is mixed into the next call's first interval. Each call must log only its own steps."
FAILS = ["test_logged_values", "test_logged_collectives"]
SOURCE = '''
_TOTALS = {"sum": 0.0, "count": 0}

def train_logged(model, batches, optimizer, log_every):
    logged = []
    for step, (x, y) in enumerate(batches, 1):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        _TOTALS["sum"] += loss.item() * len(y)
        _TOTALS["count"] += len(y)
        if step % log_every == 0 or step == len(batches):
            stats = torch.tensor([_TOTALS["sum"], _TOTALS["count"]], dtype=torch.float64)
            dist.all_reduce(stats)
            logged.append((stats[0] / stats[1]).item())
            if step != len(batches):
                _TOTALS["sum"], _TOTALS["count"] = 0.0, 0
    return logged
'''
