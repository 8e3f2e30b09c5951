"""Accumulates into a tensor and returns it (no .item()): the result is a tensor, not a float."""
CELL = "evaluate"
KIND = "contract"
NOTE = "The result must be a Python float: accumulating the batch losses as tensors returns a 0-d tensor, not a number."
FAILS = ['test_evaluate_value', 'test_evaluate_no_graph']
SOURCE = '''
def evaluate(model, loader):
    modes = {m: m.training for m in model.modules()}
    model.eval()
    try:
        total, n = 0, 0
        with torch.no_grad():
            for x, y in loader:
                total += F.cross_entropy(model(x), y, reduction="sum")
                n += len(y)
        return total / n
    finally:
        for m, t in modes.items():
            m.training = t
'''
