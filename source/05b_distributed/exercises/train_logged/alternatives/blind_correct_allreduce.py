"""Running Python totals per interval; one float64 all_reduce of [loss sum, count] at each interval's end. (written blind, from the release alone)."""
CELL = 'train_logged'
SOURCE = '''
def train_logged(model, batches, optimizer, log_every):
    """Train one step per batch; every log_every steps, the global per-sample mean loss, with one collective."""
    logged = []
    loss_sum, count = 0.0, 0
    n = len(batches)
    for step, (x, y) in enumerate(batches, start=1):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        loss_sum += loss.item() * len(y)
        count += len(y)
        if step % log_every == 0 or step == n:
            pair = torch.tensor([loss_sum, count], dtype=torch.float64)
            dist.all_reduce(pair)
            logged.append(float(pair[0] / pair[1]))
            loss_sum, count = 0.0, 0
    return logged
'''
