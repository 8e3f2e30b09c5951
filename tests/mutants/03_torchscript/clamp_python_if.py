"""A Python `if` on a tensor: fine in eager mode, but torch.export cannot capture it (data-dependent guard)."""
CELL = "clamp_or_scale"
FAILS = ["test_clamp_or_scale_export"]
SOURCE = '''
class ClampOrScale(nn.Module):
    """x.sum() > 0: clamp x into [-limit, limit]; otherwise: x * scale. Both branches kept via torch.cond."""

    def __init__(self, limit: float = 1.0, scale: float = 0.5) -> None:
        super().__init__()
        self.limit = limit
        self.scale = scale

    def forward(self, x: Tensor) -> Tensor:
        if x.sum() > 0:
            return x.clamp(-self.limit, self.limit)
        return x * self.scale
'''
