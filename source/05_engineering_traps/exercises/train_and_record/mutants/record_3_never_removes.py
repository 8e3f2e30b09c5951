"""Never removes its hook: it stays on the layer, recording into a list nobody reads."""
CELL = "train_and_record"
KIND = "state"
NOTE = "A hook is state stored on the module and outlives the function unless it is removed: left registered, it keeps recording on every later forward of the layer."
FAILS = ["test_record_hooks"]
SOURCE = '''
def train_and_record(model, loader, optimizer, layer):
    records, losses = [], []
    layer.register_forward_hook(lambda module, inputs, output: records.append(output.detach()))
    for x, y in loader:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses, torch.cat(records)
'''
