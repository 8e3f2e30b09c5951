"""Accumulates into a tensor and returns it (no .item()): the result is a tensor, not a float."""
CELL = "evaluate"
FAILS = ["test_evaluate_value"]
SOURCE = '''
def evaluate(model, loader):
    total, n = 0, 0
    with torch.no_grad():
        for x, y in loader:
            total += F.cross_entropy(model(x), y, reduction="sum")
            n += len(y)
    return total / n
'''
