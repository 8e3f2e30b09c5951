"""Correct: weights and mask folded into one matmul per row (x @ w), with the weights read into a local and cast to x's dtype. (written blind, from the release alone)."""
CELL = 'weighted_mean'
SOURCE = '''
class WeightedMean(nn.Module):
    """Weighted mean over the last dim. `weights` (an attribute) and `mask` (an argument) may both be None."""

    weights: Optional[Tensor]          # declared: serving code may set it to a tensor or to None

    def __init__(self, weights: Optional[Tensor] = None) -> None:
        super().__init__()
        self.weights = weights

    def forward(self, x: Tensor, mask: Optional[Tensor] = None) -> Tensor:
        w = self.weights                                   # a local: TorchScript refines its Optional type
        if w is None:
            w = torch.ones(x.shape[-1], dtype=x.dtype, device=x.device)
        else:
            w = w.to(dtype=x.dtype, device=x.device)
        if mask is None:
            return torch.matmul(x, w) / w.sum()
        m = mask.to(x.dtype)
        return torch.matmul(x * m, w) / torch.matmul(m, w)


def script_weighted_mean(weights: Optional[Tensor] = None) -> torch.jit.ScriptModule:
    """Return WeightedMean(weights) compiled with torch.jit.script."""
    return torch.jit.script(WeightedMean(weights))
'''
