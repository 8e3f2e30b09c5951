"""Caches the cast weights on the first call and reuses them: replacing `weights` after a call (without clearing first) has no effect. (written blind, from the release alone)."""
CELL = 'weighted_mean'
KIND = 'state'
NOTE = "A private copy of the weights (taken at construction or on the first call) goes stale: serving code changes the weights attribute, and forward only sees that change if it reads the attribute on every call."
FAILS = ['test_weighted_mean_set_weights']
SOURCE = '''
class WeightedMean(nn.Module):
    """Weighted mean over the last dim. `weights` (an attribute) and `mask` (an argument) may both be None."""

    weights: Optional[Tensor]
    _w_cache: Optional[Tensor]        # the weights as used by forward, computed once

    def __init__(self, weights: Optional[Tensor] = None) -> None:
        super().__init__()
        self.weights = weights
        self._w_cache = None

    def forward(self, x: Tensor, mask: Optional[Tensor] = None) -> Tensor:
        w = self.weights
        if w is None:
            self._w_cache = None
            w = torch.ones(x.shape[-1], dtype=x.dtype)
        else:
            c = self._w_cache
            if c is None:              # first call with weights: cast them once
                c = w.to(x.dtype)
                self._w_cache = c
            w = c
        if mask is None:
            m = torch.ones_like(x)
        else:
            m = mask.to(x.dtype)
        return (x * w * m).sum(dim=-1) / (w * m).sum(dim=-1)


def script_weighted_mean(weights: Optional[Tensor] = None) -> torch.jit.ScriptModule:
    """Return WeightedMean(weights) compiled with torch.jit.script."""
    return torch.jit.script(WeightedMean(weights))
'''
