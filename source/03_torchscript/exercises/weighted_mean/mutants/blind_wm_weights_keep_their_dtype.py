"""Casts the mask to x's dtype but multiplies by the weights as given: float64 weights on a float32 x return float64, float32 weights on a bfloat16 x return float32 (written blind from the student repository in the issue-28 review; the hidden tests missed it then)."""
CELL = "weighted_mean"
KIND = "edge-case"
NOTE = "Weights in another dtype than x promote the product: float64 weights make a float32 x's mean float64. The result keeps x's dtype only if the weights are turned into x's dtype too, not just the mask."
FAILS = ["test_weighted_mean_eager"]
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
            num = num * w
            den = den * w
        if mask is not None:
            m = mask.to(x.dtype)
            num = num * m
            den = den * m
        return num.sum(dim=-1) / den.sum(dim=-1)


def script_weighted_mean(weights: Optional[Tensor] = None) -> torch.jit.ScriptModule:
    """Return WeightedMean(weights) compiled with torch.jit.script."""
    return torch.jit.script(WeightedMean(weights))
'''
