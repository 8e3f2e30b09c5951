"""Sums the batch-mean losses and counts steps: every step weighs the same, whatever its batch size."""
CELL = "train_logged"
KIND = "wrong-value"
NOTE = "A per-sample mean weighs each batch by its number of samples: averaging batch-mean losses over steps gives every step the same weight whatever its batch size."
FAILS = ["test_logged_values", "test_logged_collectives"]
SOURCE = '''
def train_logged(model, batches, optimizer, log_every):
    logged, loss_sum, steps = [], 0.0, 0
    for step, (x, y) in enumerate(batches, 1):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        loss_sum += loss.item()
        steps += 1
        if step % log_every == 0 or step == len(batches):
            stats = torch.tensor([loss_sum, steps], dtype=torch.float64)
            dist.all_reduce(stats)
            logged.append((stats[0] / stats[1]).item())
            loss_sum, steps = 0.0, 0
    return logged
'''
