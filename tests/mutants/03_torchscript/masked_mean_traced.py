"""Traced instead of scripted: the trace records the mask branch only, and calling without a mask fails."""
CELL = "masked_mean"
FAILS = ["test_masked_mean_scripted", "test_masked_mean_script_values", "test_masked_mean_roundtrip"]
SOURCE = '''
class MaskedMean(nn.Module):
    """Mean over the last dim; with a boolean `mask`, the mean of the masked-in entries only."""

    def forward(self, x: Tensor, mask: Optional[Tensor] = None) -> Tensor:
        if mask is None:
            return x.mean(dim=-1)
        m = mask.to(x.dtype)
        return (x * m).sum(dim=-1) / m.sum(dim=-1)


def script_masked_mean() -> torch.jit.ScriptModule:
    """Return MaskedMean compiled with torch.jit.script."""
    example = torch.randn(2, 5)
    return torch.jit.trace(MaskedMean(), (example, torch.ones(2, 5, dtype=torch.bool)))
'''
