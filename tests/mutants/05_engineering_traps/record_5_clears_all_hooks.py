"""Removes hooks with layer._forward_hooks.clear(): someone else's hook on the layer is gone too."""
CELL = "train_and_record"
KIND = "mutation"
NOTE = "Clearing the layer's whole hook dictionary also removes hooks that others registered; only the hook this function added should go, and registering it returns what identifies it."
FAILS = ["test_record_hooks"]
SOURCE = '''
def train_and_record(model, loader, optimizer, layer):
    records, losses = [], []
    layer.register_forward_hook(lambda module, inputs, output: records.append(output.detach()))
    try:
        for x, y in loader:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    finally:
        layer._forward_hooks.clear()
    return losses, torch.cat(records)
'''
