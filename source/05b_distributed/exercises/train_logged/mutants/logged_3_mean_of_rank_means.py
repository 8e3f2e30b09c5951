"""Averages the ranks' own interval means (all-reduce of the mean, divided by the world size): wrong when ranks see different numbers of samples."""
CELL = "train_logged"
KIND = "wrong-value"
NOTE = "The mean of the ranks' means weighs a rank that saw few samples like one that saw many; the global per-sample mean needs the loss sums and sample counts of all ranks."
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
        if step % log_every == 0 or step == len(batches):
            mean = torch.tensor(loss_sum / count, dtype=torch.float64)
            dist.all_reduce(mean)
            logged.append(mean.item() / dist.get_world_size())
            loss_sum, count = 0.0, 0
    return logged
'''
