"""Returns its input: no layer, no counter, no state."""
KIND = "do-nothing"
NOTE = "The answer does not do the work the statement asks for yet: it returns a placeholder (its input) with no layer, counter or state."
CELL = "warmup_scale_fixed"
FAILS = ["test_warmup_values", "test_warmup_one_graph", "test_warmup_state"]
SOURCE = '''
class WarmupScaleFixed(torch.nn.Module):
    """lin(x) * min(1, step / warmup), step counted in a tensor buffer "step": compiles once."""

    def __init__(self, features: int, warmup: int):
        super().__init__()

    def forward(self, x):
        return x
'''
