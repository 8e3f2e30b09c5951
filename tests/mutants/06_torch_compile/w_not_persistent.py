"""Registers the counter with persistent=False: it is not saved, so a checkpoint restarts the warmup."""
KIND = "state"
NOTE = "A buffer registered with persistent=False is left out of state_dict(): a checkpoint does not save the call count, so a restored model restarts its warmup."
CELL = "warmup_scale_fixed"
FAILS = ["test_warmup_state"]
SOURCE = '''
class WarmupScaleFixed(torch.nn.Module):
    """lin(x) * min(1, step / warmup), step counted in a tensor buffer "step": compiles once."""

    def __init__(self, features: int, warmup: int):
        super().__init__()
        self.lin = torch.nn.Linear(features, features)
        self.warmup = warmup
        self.register_buffer("step", torch.zeros((), dtype=torch.long), persistent=False)

    def forward(self, x):
        self.step += 1
        out = self.lin(x)
        return out * torch.clamp(self.step.to(out.dtype) / self.warmup, max=1.0)
'''
