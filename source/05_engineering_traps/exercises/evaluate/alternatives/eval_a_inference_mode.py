"""torch.inference_mode() as a decorator on an inner function, a float64 tensor accumulator, modes restored per module with train(flag)."""
CELL = "evaluate"
SOURCE = '''
@torch.inference_mode()
def _mean_ce(model, loader):
    total = torch.zeros((), dtype=torch.float64)
    count = 0
    for x, y in loader:
        total += F.cross_entropy(model(x), y, reduction="sum").double()
        count += y.numel()
    return (total / count).item()

def evaluate(model, loader):
    saved = [(m, m.training) for m in model.modules()]
    try:
        model.eval()
        return _mean_ce(model, loader)
    finally:
        for m, flag in saved:
            m.train(flag)
'''
