"""Normalises the weights in __init__ with `weights /= weights.sum()`: an in-place division of the caller's tensor (and a crash on integer weights). (written blind, from the release alone)."""
CELL = 'weighted_mean'
KIND = 'mutation'
NOTE = "Rescaling the weights in place changes the caller's tensor; it is not even needed, since the weighted mean divides by the sum of the weights used anyway."
FAILS = ['test_weighted_mean_eager']
SOURCE = '''
class WeightedMean(nn.Module):
    """Weighted mean over the last dim. `weights` (an attribute) and `mask` (an argument) may both be None."""

    weights: Optional[Tensor]

    def __init__(self, weights: Optional[Tensor] = None) -> None:
        super().__init__()
        if weights is not None:
            weights /= weights.sum()          # normalise once so that the weights sum to 1
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
    return torch.jit.script(WeightedMean(weights))
'''
