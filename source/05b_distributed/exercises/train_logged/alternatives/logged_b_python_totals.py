"""The interval's loss sum and sample count kept as two Python numbers, packed into one float64 tensor only at the end of the interval (the earlier reference)."""
CELL = "train_logged"
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
        if step % log_every == 0 or step == len(batches):
            stats = torch.tensor([loss_sum, count], dtype=torch.float64)
            dist.all_reduce(stats)
            logged.append((stats[0] / stats[1]).item())
            loss_sum, count = 0.0, 0
    return logged
'''
