"""torch.where to zero the masked-out entries, `is not None` first, and a count kept as an integer tensor."""
CELL = "masked_mean"
SOURCE = '''
class MaskedMean(nn.Module):
    """Mean over the last dim; with a boolean `mask`, the mean of the masked-in entries only."""

    def forward(self, x: Tensor, mask: Optional[Tensor] = None) -> Tensor:
        if mask is not None:
            kept = torch.where(mask, x, torch.zeros_like(x))
            count = mask.sum(dim=-1)
            return kept.sum(dim=-1) / count
        return x.sum(dim=-1) / x.shape[-1]


def script_masked_mean() -> torch.jit.ScriptModule:
    """Return MaskedMean compiled with torch.jit.script."""
    module = MaskedMean()
    scripted = torch.jit.script(module)
    return scripted
'''
