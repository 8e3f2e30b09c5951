"""Copies the weights into a private attribute at construction: setting `weights` on the scripted module later changes nothing."""
CELL = "weighted_mean"
KIND = "state"
NOTE = "A private copy of the weights (taken at construction or on the first call) goes stale: serving code changes the weights attribute, and forward only sees that change if it reads the attribute on every call."
FAILS = ["test_weighted_mean_set_weights", "test_weighted_mean_roundtrip"]
SOURCE = '''
class WeightedMean(nn.Module):
    """Weighted mean over the last dim. `weights` (an attribute) and `mask` (an argument) may both be None."""
    weights: Optional[Tensor]
    _w: Optional[Tensor]

    def __init__(self, weights: Optional[Tensor] = None) -> None:
        super().__init__()
        self.weights = weights
        self._w: Optional[Tensor] = weights

    def forward(self, x: Tensor, mask: Optional[Tensor] = None) -> Tensor:
        num = x
        den = torch.ones_like(x)
        w = self._w
        if w is not None:
            num = num * w.to(x.dtype)
            den = den * w.to(x.dtype)
        if mask is not None:
            num = num * mask.to(x.dtype)
            den = den * mask.to(x.dtype)
        return num.sum(dim=-1) / den.sum(dim=-1)


def script_weighted_mean(weights: Optional[Tensor] = None) -> torch.jit.ScriptModule:
    """Return WeightedMean(weights) compiled with torch.jit.script."""
    return torch.jit.script(WeightedMean(weights))
'''
