"""Keeps a debug print at the top of forward: a graph break before the first op, so 1 graph but fullgraph=True fails. (written blind, from the release alone)."""
CELL = 'warmup_scale_fixed'
KIND = 'graph'
NOTE = "A print in forward is a graph break, even before the first op: compiling the module with fullgraph=True fails. Debugging output does not belong in code you compile."
FAILS = ['test_warmup_one_graph']
SOURCE = '''
class WarmupScaleFixed(torch.nn.Module):
    """lin(x) * min(1, step / warmup), step counted in a tensor buffer "step": compiles once."""

    def __init__(self, features: int, warmup: int, verbose: bool = True):
        super().__init__()
        self.lin = torch.nn.Linear(features, features)
        self.warmup = warmup
        self.verbose = verbose
        self.register_buffer("step", torch.zeros((), dtype=torch.long))

    def forward(self, x):
        if self.verbose:
            print("WarmupScaleFixed.forward")                # debug trace, left in
        self.step += 1
        out = self.lin(x)
        return out * torch.clamp(self.step.to(out.dtype) / self.warmup, max=1.0)
'''
