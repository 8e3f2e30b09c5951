"""Turns the weights and the mask into float32 (`.float()`): a bfloat16 input gives a float32 result (found writing wrong answers from the release)."""
CELL = "weighted_mean"
KIND = "edge-case"
NOTE = "Multiplying x by float32 weights or a mask cast to float32 promotes the result: a float16 or bfloat16 input must give a result in its own dtype, so every factor has to follow x's dtype."
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
            num = num * w.float()
            den = den * w.float()
        if mask is not None:
            num = num * mask.float()
            den = den * mask.float()
        return num.sum(dim=-1) / den.sum(dim=-1)


def script_weighted_mean(weights: Optional[Tensor] = None) -> torch.jit.ScriptModule:
    """Return WeightedMean(weights) compiled with torch.jit.script."""
    return torch.jit.script(WeightedMean(weights))
'''
