"""Evaluates without torch.no_grad(): a graph (with saved activations) is built for every batch."""
CELL = "evaluate"
FAILS = ["test_evaluate_no_graph"]
SOURCE = '''
def evaluate(model, loader):
    total, n = 0.0, 0
    for x, y in loader:
        total += F.cross_entropy(model(x), y, reduction="sum").item()
        n += len(y)
    return total / n
'''
