"""torch.inference_mode() and a tensor accumulator turned into a float at the end."""
CELL = "evaluate"
SOURCE = '''
@torch.inference_mode()
def evaluate(model, loader):
    total = torch.zeros((), dtype=torch.float64)
    count = 0
    for x, y in loader:
        total += F.cross_entropy(model(x), y, reduction="sum").double()
        count += y.numel()
    return (total / count).item()
'''
