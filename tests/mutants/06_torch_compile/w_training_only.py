"""Advances the step only in training mode: calls made after .eval() do not count."""
KIND = "edge-case"
NOTE = "The step counts every forward call, in training and in evaluation mode alike: calls made after .eval() advance the warmup too."
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
        if self.training:
            self.step += 1
        out = self.lin(x)
        return out * torch.clamp(self.step.to(out.dtype) / self.warmup, max=1.0)
'''
