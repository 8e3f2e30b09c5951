"""Correct: long buffer counted with add_, scale computed in float64 then cast to the output's dtype, torch.minimum. (written blind, from the release alone)."""
CELL = 'warmup_scale_fixed'
SOURCE = '''
class WarmupScaleFixed(torch.nn.Module):
    """lin(x) * min(1, step / warmup), step counted in a tensor buffer "step": compiles once."""

    def __init__(self, features: int, warmup: int):
        super().__init__()
        self.lin = torch.nn.Linear(features, features)
        self.warmup = warmup
        self.register_buffer("step", torch.tensor(0, dtype=torch.int64))

    def forward(self, x):
        self.step.add_(1)                                   # in place: same object, every mode
        out = self.lin(x)
        ratio = self.step.to(torch.float64) / self.warmup   # exact as Python's step / warmup
        scale = torch.minimum(ratio, torch.ones_like(ratio)).to(out.dtype)
        return out * scale
'''
