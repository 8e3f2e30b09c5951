"""torch.where for the mask, an explicit ones tensor for missing weights, the refined local named differently."""
CELL = "weighted_mean"
SOURCE = '''
class WeightedMean(nn.Module):
    """Weighted mean over the last dim. `weights` (an attribute) and `mask` (an argument) may both be None."""

    weights: Optional[Tensor]

    def __init__(self, weights: Optional[Tensor] = None) -> None:
        super().__init__()
        self.weights = weights

    def forward(self, x: Tensor, mask: Optional[Tensor] = None) -> Tensor:
        current = self.weights
        if current is None:
            scale = torch.ones(x.shape[-1], dtype=x.dtype)
        else:
            scale = current.to(x.dtype)
        weight = scale.expand_as(x)
        if mask is not None:
            weight = torch.where(mask, weight, torch.zeros_like(weight))
        return (x * weight).sum(-1) / weight.sum(-1)


def script_weighted_mean(weights: Optional[Tensor] = None) -> torch.jit.ScriptModule:
    """Return WeightedMean(weights) compiled with torch.jit.script."""
    module = WeightedMean()
    module.weights = weights
    return torch.jit.script(module)
'''
