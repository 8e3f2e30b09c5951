"""Averages the batch means: wrong when the last batch is smaller."""
CELL = "evaluate"
FAILS = ["test_evaluate_value"]
SOURCE = '''
def evaluate(model, loader):
    means = []
    with torch.no_grad():
        for x, y in loader:
            means.append(F.cross_entropy(model(x), y).item())
    return sum(means) / len(means)
'''
