"""Registers one module-level tensor as every instance's buffer: instances share (and reset) one counter."""
KIND = "state"
NOTE = "Registering the same tensor object as every instance's buffer makes all instances share one counter, and each new instance resets it: every module needs a tensor of its own."
CELL = "warmup_scale_fixed"
FAILS = ["test_warmup_state"]
SOURCE = '''
_SHARED_STEP = torch.zeros((), dtype=torch.long)

class WarmupScaleFixed(torch.nn.Module):
    """lin(x) * min(1, step / warmup), step counted in a tensor buffer "step": compiles once."""

    def __init__(self, features: int, warmup: int):
        super().__init__()
        self.lin = torch.nn.Linear(features, features)
        self.warmup = warmup
        _SHARED_STEP.zero_()
        self.register_buffer("step", _SHARED_STEP)

    def forward(self, x):
        self.step += 1
        out = self.lin(x)
        return out * torch.clamp(self.step.to(out.dtype) / self.warmup, max=1.0)
'''
