"""Concatenates with torch.stack(records).flatten(0, 1): only works when every batch has the same size. (written blind, from the release alone)."""
CELL = 'train_and_record'
KIND = 'edge-case'
NOTE = "torch.stack needs records of identical shape, so a smaller last batch breaks it; batches of different sizes are joined along their existing first dimension, not stacked on a new one."
FAILS = ['test_record_hooks', 'test_record_values']
SOURCE = '''
def train_and_record(model, loader, optimizer, layer):
    """One epoch of cross-entropy training; returns (losses as floats, layer's outputs concatenated, no history)."""
    records, losses = [], []
    handle = layer.register_forward_hook(lambda mod, inp, out: records.append(out.detach()))
    try:
        for x, y in loader:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    finally:
        handle.remove()
    return losses, torch.stack(records).flatten(0, 1)
'''
