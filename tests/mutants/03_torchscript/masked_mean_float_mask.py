"""Turns the mask into float32 (mask.float()): a float64 input comes back as float32."""
CELL = "masked_mean"
FAILS = ["test_masked_mean_eager", "test_masked_mean_script_values"]
SOURCE = '''
class MaskedMean(nn.Module):
    """Mean over the last dim; with a boolean `mask`, the mean of the masked-in entries only."""

    def forward(self, x: Tensor, mask: Optional[Tensor] = None) -> Tensor:
        if mask is None:
            return x.mean(dim=-1)
        m = mask.float()
        return ((x * m).sum(dim=-1) / m.sum(dim=-1)).float()


def script_masked_mean() -> torch.jit.ScriptModule:
    """Return MaskedMean compiled with torch.jit.script."""
    return torch.jit.script(MaskedMean())
'''
