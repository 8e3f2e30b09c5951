"""Reduces the sum and the count with two all-reduces per interval: right values, twice the collectives allowed."""
CELL = "train_logged"
KIND = "contract"
NOTE = "One collective can carry several numbers: reducing the loss sum and the sample count separately doubles the collectives per interval."
FAILS = ["test_logged_collectives"]
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
            total = torch.tensor(loss_sum, dtype=torch.float64)
            n = torch.tensor(float(count), dtype=torch.float64)
            dist.all_reduce(total)
            dist.all_reduce(n)
            logged.append((total / n).item())
            loss_sum, count = 0.0, 0
    return logged
'''
