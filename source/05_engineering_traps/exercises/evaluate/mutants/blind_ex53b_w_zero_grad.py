"""Calls model.zero_grad() first 'to start clean': wipes the gradients a training loop had accumulated. (written blind, from the release alone)."""
CELL = 'evaluate'
KIND = 'mutation'
NOTE = "Measuring a model must leave its .grad alone: clearing the gradients to start clean destroys those a training loop had accumulated and is about to use."
FAILS = ['test_evaluate_no_graph']
SOURCE = '''
def evaluate(model, loader):
    """Mean cross-entropy per target value in eval mode, without a graph; every module's mode is restored."""
    modes = {m: m.training for m in model.modules()}
    model.zero_grad(set_to_none=True)   # no stale gradients during evaluation
    model.eval()
    try:
        total, n = 0.0, 0
        with torch.no_grad():
            for x, y in loader:
                total += F.cross_entropy(model(x), y, reduction="sum").item()
                n += y.numel()
        return total / n
    finally:
        for m, was in modes.items():
            m.training = was
'''
