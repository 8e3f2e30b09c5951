"""Scales before counting the call: the first output is multiplied by 0."""
CELL = "warmup_scale_fixed"
FAILS = ["test_warmup_values", "test_warmup_one_graph", "test_warmup_state"]
SOURCE = '''
class WarmupScaleFixed(torch.nn.Module):
    """lin(x) * min(1, step / warmup), step counted in a tensor buffer "step": compiles once."""

    def __init__(self, features: int, warmup: int):
        super().__init__()
        self.lin = torch.nn.Linear(features, features)
        self.warmup = warmup
        self.register_buffer("step", torch.zeros((), dtype=torch.long))

    def forward(self, x):
        out = self.lin(x) * torch.clamp(self.step / self.warmup, max=1.0)
        self.step += 1
        return out
'''
