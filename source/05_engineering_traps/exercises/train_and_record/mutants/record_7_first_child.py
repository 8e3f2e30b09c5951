"""Works only for an nn.Sequential: records model[:2](x) instead of hooking `layer`."""
CELL = "train_and_record"
KIND = "overfit"
NOTE = "The layer to watch can be any submodule, at any depth, of any model: slicing the model assumes an nn.Sequential with the layer at a fixed place. A hook on the layer sees its real output."
FAILS = ["test_record_values", "test_record_no_graph", "test_record_hooks"]
SOURCE = '''
def train_and_record(model, loader, optimizer, layer):
    records, losses = [], []
    for x, y in loader:
        with torch.no_grad():
            records.append(model[:2](x))
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses, torch.cat(records)
'''
