"""Uses float(loss.detach()) and set_to_none zeroing, with enumerate."""
CELL = "train_epoch"
SOURCE = '''
def train_epoch(model, loader, optimizer):
    out = []
    for i, (x, y) in enumerate(loader):
        optimizer.zero_grad(set_to_none=True)
        logits = model(x)
        loss = F.cross_entropy(logits, y)
        loss.backward()
        optimizer.step()
        out.append(float(loss.detach()))
        del logits, loss
    return out
'''
