"""Restores with model.train(was_training): a model with mixed modes (a frozen BN in eval inside a training model) comes back all-train. (written blind, from the release alone)."""
CELL = 'evaluate'
KIND = 'contract'
NOTE = "model.train(...) sets every submodule to one mode: a model that was in eval mode, or one mixing modes (a frozen BatchNorm in eval inside a training model), does not come back as it was."
FAILS = ['test_evaluate_modes']
SOURCE = '''
def evaluate(model, loader):
    """Mean cross-entropy per target value in eval mode, without a graph; every module's mode is restored."""
    was_training = model.training
    model.eval()
    try:
        total, n = 0.0, 0
        with torch.no_grad():
            for x, y in loader:
                total += F.cross_entropy(model(x), y, reduction="sum").item()
                n += y.numel()
        return total / n
    finally:
        model.train(was_training)
'''
