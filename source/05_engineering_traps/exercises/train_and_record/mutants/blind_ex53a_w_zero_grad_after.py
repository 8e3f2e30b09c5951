"""Calls optimizer.zero_grad() after the step instead of before: gradients already on the model leak into the first step. (written blind, from the release alone)."""
CELL = 'train_and_record'
KIND = 'state'
NOTE = "Clearing gradients only after each step lets the first backward add to whatever .grad the parameters already held: each step clears the gradients before its own backward."
FAILS = ['test_record_values']
SOURCE = '''
def train_and_record(model, loader, optimizer, layer):
    """One epoch of cross-entropy training; returns (losses as floats, layer's outputs concatenated, no history)."""
    records, losses = [], []
    handle = layer.register_forward_hook(lambda mod, inp, out: records.append(out.detach()))
    try:
        for x, y in loader:
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()     # clean up for the next batch
            losses.append(loss.item())
    finally:
        handle.remove()
    return losses, torch.cat(records)
'''
