"""A float64 buffer updated with add_, and torch.minimum against a constant tensor for the scale."""
CELL = "warmup_scale_fixed"
SOURCE = '''
class WarmupScaleFixed(torch.nn.Module):
    """lin(x) * min(1, step / warmup), step counted in a tensor buffer "step": compiles once."""

    def __init__(self, features: int, warmup: int):
        super().__init__()
        self.lin = torch.nn.Linear(features, features)
        self.inv_warmup = 1.0 / warmup
        self.register_buffer("step", torch.zeros((), dtype=torch.float64))

    def forward(self, x):
        self.step.add_(1.0)
        scale = torch.minimum(self.step * self.inv_warmup, torch.ones((), dtype=torch.float64))
        return self.lin(x) * scale.to(x.dtype)
'''
