"""Divides the summed loss by the number of rows (len(y)): right for 1-D targets, wrong when each row has several labels."""
CELL = "evaluate"
KIND = "edge-case"
NOTE = "With per-position targets of shape (N, d1, ...) every position is a target: dividing by the number of rows instead of the number of target values overstates the mean."
FAILS = ["test_evaluate_value"]
SOURCE = '''
def evaluate(model, loader):
    modes = {m: m.training for m in model.modules()}
    model.eval()
    try:
        total, n = 0.0, 0
        with torch.no_grad():
            for x, y in loader:
                total += F.cross_entropy(model(x), y, reduction="sum").item()
                n += len(y)
        return total / n
    finally:
        for m, was_training in modes.items():
            m.training = was_training
'''
