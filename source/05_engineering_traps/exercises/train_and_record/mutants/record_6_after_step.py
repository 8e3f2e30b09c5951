"""Records with a second forward under no_grad after the optimizer step: the values of the updated model, not of the step's forward."""
CELL = "train_and_record"
KIND = "wrong-value"
NOTE = "The recorded values must come from each step's own forward, before its optimizer step; a second forward after the step sees the updated weights (and runs the model twice)."
FAILS = ["test_record_values", "test_record_no_graph", "test_record_hooks"]
SOURCE = '''
def train_and_record(model, loader, optimizer, layer):
    records, losses = [], []
    for x, y in loader:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        handle = layer.register_forward_hook(lambda module, inputs, output: records.append(output.detach()))
        try:
            with torch.no_grad():
                model(x)
        finally:
            handle.remove()
    return losses, torch.cat(records)
'''
