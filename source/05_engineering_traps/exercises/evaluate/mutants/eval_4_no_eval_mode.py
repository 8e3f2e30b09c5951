"""Uses no_grad but never model.eval(): Dropout stays on and BatchNorm uses (and updates) batch statistics."""
CELL = "evaluate"
KIND = "state"
NOTE = "torch.no_grad() switches autograd, not modules: without eval mode, Dropout stays active and BatchNorm normalises with batch statistics and updates its running ones."
FAILS = ['test_evaluate_value', 'test_evaluate_modes']
SOURCE = '''
def evaluate(model, loader):
    total, n = 0.0, 0
    with torch.no_grad():
        for x, y in loader:
            total += F.cross_entropy(model(x), y, reduction="sum").item()
            n += len(y)
    return total / n
'''
