"""Averages over dim=1, which is the last dim only for the 2-D example: wrong for 1-D and 3-D inputs."""
CELL = "masked_mean"
FAILS = ["test_masked_mean_eager", "test_masked_mean_script_values"]
SOURCE = '''
class MaskedMean(nn.Module):
    """Mean over the last dim; with a boolean `mask`, the mean of the masked-in entries only."""

    def forward(self, x: Tensor, mask: Optional[Tensor] = None) -> Tensor:
        if mask is None:
            return x.mean(dim=1)
        m = mask.to(x.dtype)
        return (x * m).sum(dim=1) / m.sum(dim=1)


def script_masked_mean() -> torch.jit.ScriptModule:
    """Return MaskedMean compiled with torch.jit.script."""
    return torch.jit.script(MaskedMean())
'''
