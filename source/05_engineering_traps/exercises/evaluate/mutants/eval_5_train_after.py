"""Calls model.eval() before and model.train() after: a model that was in eval mode (or a frozen BatchNorm) comes back in training mode."""
CELL = "evaluate"
KIND = "state"
NOTE = "model.train(...) sets every submodule to one mode: a model that was in eval mode, or one mixing modes (a frozen BatchNorm in eval inside a training model), does not come back as it was."
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
