"""Counter is a plain tensor attribute added to state_dict() by an override: load_state_dict rejects/ignores it, .to() does not move it. (written blind, from the release alone)."""
CELL = 'warmup_scale_fixed'
KIND = 'contract'
NOTE = "A plain tensor attribute is not part of the module's state: adding it to state_dict() by hand does not make load_state_dict restore it, nor .to() convert it. Modules have a kind of attribute for that."
FAILS = ['test_warmup_state']
SOURCE = '''
class WarmupScaleFixed(torch.nn.Module):
    """lin(x) * min(1, step / warmup), step counted in a tensor buffer "step": compiles once."""

    def __init__(self, features: int, warmup: int):
        super().__init__()
        self.lin = torch.nn.Linear(features, features)
        self.warmup = warmup
        self.step = torch.zeros((), dtype=torch.long)       # a tensor, so Dynamo does not guard on its value

    def state_dict(self, *args, **kwargs):
        sd = super().state_dict(*args, **kwargs)
        sd["step"] = self.step.clone()
        return sd

    def forward(self, x):
        self.step += 1
        out = self.lin(x)
        return out * torch.clamp(self.step.to(out.dtype) / self.warmup, max=1.0)
'''
