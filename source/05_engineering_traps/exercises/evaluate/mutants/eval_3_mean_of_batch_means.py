"""Averages the batch means: wrong when the last batch is smaller."""
CELL = "evaluate"
KIND = "wrong-value"
NOTE = "The mean of the batch means weighs a small last batch like a full one: the mean per target is the summed loss of all batches divided by the total number of targets."
FAILS = ['test_evaluate_value']
SOURCE = '''
def evaluate(model, loader):
    modes = {m: m.training for m in model.modules()}
    model.eval()
    try:
        means = []
        with torch.no_grad():
            for x, y in loader:
                means.append(F.cross_entropy(model(x), y).item())
        return sum(means) / len(means)
    finally:
        for m, t in modes.items():
            m.training = t
'''
