"""Calls zero_grad between backward and step: every step applies a zero gradient."""
CELL = "train_epoch"
FAILS = ['test_train_epoch_values']
SOURCE = '''
def train_epoch(model, loader, optimizer):
    losses = []
    for x, y in loader:
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.zero_grad()
        optimizer.step()
        losses.append(loss.item())
    return losses
'''
