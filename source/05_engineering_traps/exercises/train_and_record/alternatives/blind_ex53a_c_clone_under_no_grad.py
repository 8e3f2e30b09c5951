"""Correct: hook copies the output with detach().clone() (safe against later in-place ops), handle removed in finally. (written blind, from the release alone)."""
CELL = 'train_and_record'
SOURCE = '''
def train_and_record(model, loader, optimizer, layer):
    """One epoch of cross-entropy training; returns (losses as floats, layer's outputs concatenated, no history)."""
    records, losses = [], []

    def keep(module, inputs, output):
        records.append(output.detach().clone())

    handle = layer.register_forward_hook(keep)
    try:
        for x, y in loader:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
            losses.append(float(loss.detach()))
            del loss
    finally:
        handle.remove()
    return losses, torch.cat(records, dim=0)
'''
