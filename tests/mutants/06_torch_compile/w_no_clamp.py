"""Forgets the min(1, ...): after the warmup the scale keeps growing."""
KIND = "wrong-value"
NOTE = "The scale is min(1, step / warmup): without the cap it keeps growing after the warmup instead of staying at 1."
CELL = "warmup_scale_fixed"
FAILS = ["test_warmup_values", "test_warmup_one_graph"]
SOURCE = '''
class WarmupScaleFixed(torch.nn.Module):
    """lin(x) * min(1, step / warmup), step counted in a tensor buffer "step": compiles once."""

    def __init__(self, features: int, warmup: int):
        super().__init__()
        self.lin = torch.nn.Linear(features, features)
        self.warmup = warmup
        self.register_buffer("step", torch.zeros((), dtype=torch.long))

    def forward(self, x):
        self.step += 1
        out = self.lin(x)
        return out * (self.step.to(out.dtype) / self.warmup)
'''
