"""Keeps a running total `total += loss` (for logging): the graph of every step stays chained."""
CELL = "train_epoch"
FAILS = ["test_train_epoch_no_growth"]
SOURCE = '''
def train_epoch(model, loader, optimizer):
    losses = []
    total = 0
    for x, y in loader:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss
        losses.append(loss.item())
    print(f"epoch mean loss {float(total) / len(losses):.4f}")
    return losses
'''
