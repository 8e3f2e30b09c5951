"""Reduces with keepdim=True and then calls .squeeze(): every size-1 batch dimension disappears too (x of shape (1, 4) gives shape ()). (written blind, from the release alone)."""
CELL = 'weighted_mean'
KIND = 'edge-case'
NOTE = "squeeze() with no dimension removes every size-1 dimension, batch dimensions included: x of shape (1, 5) must give shape (1,), not a 0-d tensor."
FAILS = ['test_weighted_mean_eager']
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
        out = num.sum(dim=-1, keepdim=True) / den.sum(dim=-1, keepdim=True)
        return out.squeeze()


def script_weighted_mean(weights: Optional[Tensor] = None) -> torch.jit.ScriptModule:
    """Return WeightedMean(weights) compiled with torch.jit.script."""
    return torch.jit.script(WeightedMean(weights))
'''
