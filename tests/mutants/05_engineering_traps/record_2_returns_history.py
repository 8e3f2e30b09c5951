"""Stores the outputs with their history and returns them concatenated as they are: the result carries the whole epoch's graph."""
CELL = "train_and_record"
KIND = "graph"
NOTE = "A forward hook's output carries the autograd graph of its forward: every output stored as it is keeps that step's graph alive, so the live graph grows with the number of batches."
FAILS = ["test_record_no_graph"]
SOURCE = '''
def train_and_record(model, loader, optimizer, layer):
    records, losses = [], []
    handle = layer.register_forward_hook(lambda module, inputs, output: records.append(output))
    try:
        for x, y in loader:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    finally:
        handle.remove()
    return losses, torch.cat(records)
'''
