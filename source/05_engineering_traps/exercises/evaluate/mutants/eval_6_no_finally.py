"""Restores every module's mode, but not in a finally block: an exception in the loop leaves the model in eval mode."""
CELL = "evaluate"
KIND = "edge-case"
NOTE = "Code after the loop does not run when the loop raises: the modes must be restored even when an exception leaves the function, or the model stays in eval mode."
FAILS = ['test_evaluate_modes']
SOURCE = '''
def evaluate(model, loader):
    modes = [(m, m.training) for m in model.modules()]
    model.eval()
    total, n = 0.0, 0
    with torch.no_grad():
        for x, y in loader:
            total += F.cross_entropy(model(x), y, reduction="sum").item()
            n += y.numel()
    for m, t in modes:
        m.train(t)
    return total / n
'''
