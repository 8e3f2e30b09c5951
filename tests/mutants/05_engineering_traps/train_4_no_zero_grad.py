"""Never clears the gradients: each step uses the sum of all gradients so far."""
CELL = "train_epoch"
FAILS = ['test_train_epoch_values']
SOURCE = '''
def train_epoch(model, loader, optimizer):
    losses = []
    for x, y in loader:
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
'''
