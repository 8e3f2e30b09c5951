"""Traces the module instead of scripting it: the weights become constants of the trace and the mask branch is fixed."""
CELL = "weighted_mean"
KIND = "contract"
NOTE = "torch.jit.trace records one run: the weights become constants and only the branch taken (mask or no mask) is kept. torch.jit.script compiles the control flow and keeps the attribute settable."
FAILS = ["test_weighted_mean_scripted", "test_weighted_mean_set_weights", "test_weighted_mean_roundtrip"]
SOURCE = '''
class WeightedMean(nn.Module):
    """Weighted mean over the last dim. `weights` (an attribute) and `mask` (an argument) may both be None."""
    weights: Optional[Tensor]

    def __init__(self, weights: Optional[Tensor] = None) -> None:
        super().__init__()
        self.weights = weights

    def forward(self, x: Tensor, mask: Optional[Tensor] = None) -> Tensor:
        num = x
        den = torch.ones_like(x)
        w = self.weights
        if w is not None:
            num = num * w.to(x.dtype)
            den = den * w.to(x.dtype)
        if mask is not None:
            num = num * mask.to(x.dtype)
            den = den * mask.to(x.dtype)
        return num.sum(dim=-1) / den.sum(dim=-1)


def script_weighted_mean(weights: Optional[Tensor] = None) -> torch.jit.ScriptModule:
    """Return WeightedMean(weights) compiled with torch.jit.script."""
    return torch.jit.trace(WeightedMean(weights), torch.ones(2, 4), check_trace=False)
'''
