"""Removes its hook after the loop, but not in a finally block: an exception in the loop leaves the hook on the layer."""
CELL = "train_and_record"
KIND = "edge-case"
NOTE = "Code after the loop does not run when the loop raises: the hook must also be removed when an exception leaves the function."
FAILS = ["test_record_hooks"]
SOURCE = '''
def train_and_record(model, loader, optimizer, layer):
    records, losses = [], []
    handle = layer.register_forward_hook(lambda module, inputs, output: records.append(output.detach()))
    for x, y in loader:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    handle.remove()
    return losses, torch.cat(records)
'''
