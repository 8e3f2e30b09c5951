"""Default weights built as float32 (torch.ones) and the mask cast with .float(): a float16/bfloat16 x returns a float32 result. (written blind, from the release alone)."""
CELL = 'weighted_mean'
KIND = 'edge-case'
NOTE = "Multiplying x by float32 weights or a mask cast to float32 promotes the result: a float16 or bfloat16 input must give a result in its own dtype, so every factor has to follow x's dtype."
FAILS = ['test_weighted_mean_eager']
SOURCE = '''
class WeightedMean(nn.Module):
    """Weighted mean over the last dim. `weights` (an attribute) and `mask` (an argument) may both be None."""

    weights: Optional[Tensor]

    def __init__(self, weights: Optional[Tensor] = None) -> None:
        super().__init__()
        self.weights = weights

    def forward(self, x: Tensor, mask: Optional[Tensor] = None) -> Tensor:
        w = self.weights
        if w is None:
            w = torch.ones(x.shape[-1])
        if mask is None:
            m = torch.ones_like(x)
        else:
            m = mask.float()
        return (x * w * m).sum(dim=-1) / (w * m).sum(dim=-1)


def script_weighted_mean(weights: Optional[Tensor] = None) -> torch.jit.ScriptModule:
    """Return WeightedMean(weights) compiled with torch.jit.script."""
    return torch.jit.script(WeightedMean(weights))
'''
