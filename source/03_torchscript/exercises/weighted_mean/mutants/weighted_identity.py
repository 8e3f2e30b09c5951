"""Returns x unchanged: no reduction at all (a do-nothing answer must score 0)."""
CELL = "weighted_mean"
KIND = "do-nothing"
NOTE = "The answer does not do the work the statement asks for yet: forward returns its input unchanged instead of a weighted mean."
FAILS = ["test_weighted_mean_eager", "test_weighted_mean_scripted", "test_weighted_mean_set_weights", "test_weighted_mean_roundtrip"]
SOURCE = '''
class WeightedMean(nn.Module):
    """Weighted mean over the last dim. `weights` (an attribute) and `mask` (an argument) may both be None."""
    weights: Optional[Tensor]

    def __init__(self, weights: Optional[Tensor] = None) -> None:
        super().__init__()
        self.weights = weights

    def forward(self, x: Tensor, mask: Optional[Tensor] = None) -> Tensor:
        return x


def script_weighted_mean(weights: Optional[Tensor] = None) -> torch.jit.ScriptModule:
    """Return WeightedMean(weights) compiled with torch.jit.script."""
    return torch.jit.script(WeightedMean(weights))
'''
