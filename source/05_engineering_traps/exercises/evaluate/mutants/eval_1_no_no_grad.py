"""Evaluates in eval mode but without torch.no_grad(): a graph (with saved activations) is built for every batch."""
CELL = "evaluate"
KIND = "graph"
NOTE = "model.eval() switches modules, not autograd: without no_grad (or inference_mode) every batch still builds a graph and saves activations for a backward that never comes."
FAILS = ['test_evaluate_no_graph']
SOURCE = '''
def evaluate(model, loader):
    modes = {m: m.training for m in model.modules()}
    model.eval()
    try:
        total, n = 0.0, 0
        for x, y in loader:
            total += F.cross_entropy(model(x), y, reduction="sum").item()
            n += y.numel()
        return total / n
    finally:
        for m, t in modes.items():
            m.training = t
'''
