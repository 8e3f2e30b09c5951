"""Reduces over dim=1 (the demo's 2-D case) instead of the last dimension: wrong for 1-D and 3-D inputs."""
CELL = "weighted_mean"
KIND = "wrong-value"
NOTE = "The mean is over the last dimension whatever the rank: dim=1 is the last one only for 2-D inputs, so a 3-D input is reduced along the wrong axis."
FAILS = ["test_weighted_mean_eager", "test_weighted_mean_scripted", "test_weighted_mean_set_weights", "test_weighted_mean_roundtrip"]
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
        if x.dim() == 1:
            return num.sum(dim=0) / den.sum(dim=0)
        return num.sum(dim=1) / den.sum(dim=1)


def script_weighted_mean(weights: Optional[Tensor] = None) -> torch.jit.ScriptModule:
    """Return WeightedMean(weights) compiled with torch.jit.script."""
    return torch.jit.script(WeightedMean(weights))
'''
