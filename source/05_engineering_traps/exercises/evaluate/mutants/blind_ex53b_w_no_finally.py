"""Restores every module's mode after the loop, but not in a finally: an exception in the loop leaves the model in eval(). (written blind, from the release alone)."""
CELL = 'evaluate'
KIND = 'edge-case'
NOTE = "Code after the loop does not run when the loop raises: the modes must be restored even when an exception leaves the function, or the model stays in eval mode."
FAILS = ['test_evaluate_modes']
SOURCE = '''
def evaluate(model, loader):
    """Mean cross-entropy per target value in eval mode, without a graph; every module's mode is restored."""
    modes = {m: m.training for m in model.modules()}
    model.eval()
    total, n = 0.0, 0
    with torch.no_grad():
        for x, y in loader:
            total += F.cross_entropy(model(x), y, reduction="sum").item()
            n += y.numel()
    for m, was in modes.items():
        m.training = was
    return total / n
'''
