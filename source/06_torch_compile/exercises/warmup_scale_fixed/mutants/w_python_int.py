"""Keeps a Python int counter (as WarmupScale does): recompiles every call, and the count is not in state_dict."""
KIND = "contract"
NOTE = "Dynamo guards on the Python numbers the compiled code reads: an int attribute that changes every call forces a recompile each time, and it is not saved in state_dict() either."
CELL = "warmup_scale_fixed"
FAILS = ["test_warmup_one_graph", "test_warmup_state"]
SOURCE = '''
class WarmupScaleFixed(torch.nn.Module):
    """lin(x) * min(1, step / warmup), step counted in a tensor buffer "step": compiles once."""

    def __init__(self, features: int, warmup: int):
        super().__init__()
        self.lin = torch.nn.Linear(features, features)
        self.warmup = warmup
        self.step = 0

    def forward(self, x):
        self.step += 1
        return self.lin(x) * min(1.0, self.step / self.warmup)
'''
