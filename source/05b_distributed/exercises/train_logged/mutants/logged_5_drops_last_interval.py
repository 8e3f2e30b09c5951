"""Logs only full intervals: the shorter last interval is never reported."""
CELL = "train_logged"
KIND = "edge-case"
NOTE = "The last interval may be shorter than log_every, and its steps must still be logged: reporting only full intervals leaves them out."
FAILS = ["test_logged_values", "test_logged_collectives"]
SOURCE = '''
def train_logged(model, batches, optimizer, log_every):
    logged, loss_sum, count = [], 0.0, 0
    for step, (x, y) in enumerate(batches, 1):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        loss_sum += loss.item() * len(y)
        count += len(y)
        if step % log_every == 0:
            stats = torch.tensor([loss_sum, count], dtype=torch.float64)
            dist.all_reduce(stats)
            logged.append((stats[0] / stats[1]).item())
            loss_sum, count = 0.0, 0
    return logged
'''
