"""Computes the scale as long / int, a float32 tensor whatever the module's dtype: float64 outputs are off in the 8th digit."""
KIND = "edge-case"
NOTE = "An integer tensor divided by a Python int gives a tensor of the default dtype (float32): the scale is then rounded to float32 even when the module computes in float64."
CELL = "warmup_scale_fixed"
FAILS = ["test_warmup_values"]
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
        return self.lin(x) * torch.clamp(self.step / self.warmup, max=1.0)
'''
