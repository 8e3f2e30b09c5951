"""Appends the loss tensors themselves: each keeps its graph alive after the epoch."""
CELL = "train_epoch"
FAILS = ["test_train_epoch_values", "test_train_epoch_no_growth"]
SOURCE = '''
def train_epoch(model, loader, optimizer):
    losses = []
    for x, y in loader:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss)
    return losses
'''
