"""Hard-codes the warmup of the visible example (3) instead of using the argument."""
KIND = "overfit"
NOTE = "The warmup length is the constructor's argument: a number fixed from the visible example gives the wrong scale for any other warmup."
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
        self.step += 1
        out = self.lin(x)
        return out * torch.clamp(self.step.to(out.dtype) / 3, max=1.0)
'''
