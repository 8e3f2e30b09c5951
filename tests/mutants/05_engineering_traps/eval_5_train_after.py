"""Calls model.eval() before and model.train() after: a model that was in eval mode (or a frozen BatchNorm) comes back in training mode."""
CELL = "evaluate"
KIND = "state"
FAILS = ['test_evaluate_modes']
SOURCE = '''
def evaluate(model, loader):
    model.eval()
    total, n = 0.0, 0
    with torch.no_grad():
        for x, y in loader:
            total += F.cross_entropy(model(x), y, reduction="sum").item()
            n += y.numel()
    model.train()
    return total / n
'''
