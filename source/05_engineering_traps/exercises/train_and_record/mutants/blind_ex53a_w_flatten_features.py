"""Flattens each record to (rows, features): a (N, C, L) layer output loses its feature shape. (written blind, from the release alone)."""
CELL = 'train_and_record'
KIND = 'edge-case'
NOTE = "The recorded outputs keep their feature shape, (total rows, *feature shape): flattening each record to (rows, features) loses it for layers whose outputs have more than two dimensions."
FAILS = ['test_record_hooks', 'test_record_values']
SOURCE = '''
def train_and_record(model, loader, optimizer, layer):
    """One epoch of cross-entropy training; returns (losses as floats, layer's outputs concatenated, no history)."""
    records, losses = [], []

    def hook(module, inputs, output):
        records.append(output.detach().reshape(output.shape[0], -1))   # one row per sample

    handle = layer.register_forward_hook(hook)
    try:
        for x, y in loader:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    finally:
        handle.remove()
    return losses, torch.cat(records, 0)
'''
