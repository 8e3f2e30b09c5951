"""masked_fill with the inverted mask, a ones mask for the None case, and `import typing` spelled out."""
CELL = "masked_mean"
SOURCE = '''
import typing


class MaskedMean(nn.Module):
    """Mean over the last dim; with a boolean `mask`, the mean of the masked-in entries only."""

    def forward(self, x: Tensor, mask: typing.Optional[Tensor] = None) -> Tensor:
        if mask is None:
            keep = torch.ones_like(x, dtype=torch.bool)
        else:
            keep = mask
        total = x.masked_fill(~keep, 0.0).sum(-1)
        return total / keep.to(x.dtype).sum(-1)


def script_masked_mean() -> torch.jit.ScriptModule:
    """Return MaskedMean compiled with torch.jit.script."""
    return torch.jit.script(MaskedMean().eval())
'''
