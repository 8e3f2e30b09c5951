"""No collective at all: logs this rank's own per-sample mean, which differs between ranks."""
CELL = "train_logged"
KIND = "wrong-value"
NOTE = "Each rank sees only its own batches, so its own mean differs from the other ranks': the logged value is the global mean over all ranks, which needs one collective per interval."
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
            logged.append(loss_sum / count)
            loss_sum, count = 0.0, 0
    return logged
'''
