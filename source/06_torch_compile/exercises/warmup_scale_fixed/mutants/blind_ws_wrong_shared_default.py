"""The counter tensor is a mutable default argument shared by every instance (reset in __init__): instances interfere. (written blind, from the release alone)."""
CELL = 'warmup_scale_fixed'
KIND = 'state'
NOTE = "Registering the same tensor object as every instance's buffer makes all instances share one counter, and each new instance resets it: every module needs a tensor of its own."
FAILS = ['test_warmup_state']
SOURCE = '''
class WarmupScaleFixed(torch.nn.Module):
    """lin(x) * min(1, step / warmup), step counted in a tensor buffer "step": compiles once."""

    def __init__(self, features: int, warmup: int, step: torch.Tensor = torch.zeros((), dtype=torch.long)):
        super().__init__()
        self.lin = torch.nn.Linear(features, features)
        self.warmup = warmup
        self.register_buffer("step", step)
        self.step.zero_()                                   # a new model starts its warmup from 0

    def forward(self, x):
        self.step += 1
        out = self.lin(x)
        return out * torch.clamp(self.step.to(out.dtype) / self.warmup, max=1.0)
'''
