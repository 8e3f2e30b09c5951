"""Uses all_gather into a hard-coded list of two tensors (the notebook's 2 ranks): fails on any other world size. (written blind, from the release alone)."""
CELL = 'train_logged'
KIND = 'overfit'
NOTE = 'A list of exactly two tensors for all_gather works only on 2 ranks: size collective buffers by dist.get_world_size().'
FAILS = ['test_logged_values']
SOURCE = '''
def train_logged(model, batches, optimizer, log_every):
    """Train one step per batch; every log_every steps, the global per-sample mean loss, with one collective."""
    logged = []
    loss_sum, count = 0.0, 0
    for step, (x, y) in enumerate(batches, start=1):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        loss_sum += loss.item() * len(y)
        count += len(y)
        if step % log_every == 0 or step == len(batches):
            mine = torch.tensor([loss_sum, count], dtype=torch.float64)
            both = [torch.zeros(2, dtype=torch.float64), torch.zeros(2, dtype=torch.float64)]
            dist.all_gather(both, mine)
            total = both[0] + both[1]
            logged.append(total[0].item() / total[1].item())
            loss_sum, count = 0.0, 0
    return logged
'''
