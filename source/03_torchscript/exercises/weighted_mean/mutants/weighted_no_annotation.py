"""No class-level `weights: Optional[Tensor]`: script types the attribute from its value (None or Tensor), so it cannot be set or cleared later."""
CELL = "weighted_mean"
KIND = "edge-case"
NOTE = "Without a declared Optional[Tensor] type, torch.jit.script types the attribute from the value it holds at compile time (None or a Tensor), so serving code cannot later switch it to the other."
FAILS = ["test_weighted_mean_set_weights", "test_weighted_mean_roundtrip"]
SOURCE = '''
class WeightedMean(nn.Module):
    """Weighted mean over the last dim. `weights` (an attribute) and `mask` (an argument) may both be None."""

    def __init__(self, weights: Optional[Tensor] = None) -> None:
        super().__init__()
        self.weights = weights

    def forward(self, x: Tensor, mask: Optional[Tensor] = None) -> Tensor:
        num = x
        den = torch.ones_like(x)
        if self.weights is not None:
            num = num * self.weights.to(x.dtype)
            den = den * self.weights.to(x.dtype)
        if mask is not None:
            num = num * mask.to(x.dtype)
            den = den * mask.to(x.dtype)
        return num.sum(dim=-1) / den.sum(dim=-1)


def script_weighted_mean(weights: Optional[Tensor] = None) -> torch.jit.ScriptModule:
    """Return WeightedMean(weights) compiled with torch.jit.script."""
    return torch.jit.script(WeightedMean(weights))
'''
