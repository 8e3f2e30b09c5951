"""Clamps from above only (clamp(max=limit)): entries below -limit are left alone."""
CELL = "clamp_or_scale"
FAILS = ["test_clamp_or_scale_eager", "test_clamp_or_scale_export"]
SOURCE = '''
class ClampOrScale(nn.Module):
    """x.sum() > 0: clamp x into [-limit, limit]; otherwise: x * scale. Both branches kept via torch.cond."""

    def __init__(self, limit: float = 1.0, scale: float = 0.5) -> None:
        super().__init__()
        self.limit = limit
        self.scale = scale

    def forward(self, x: Tensor) -> Tensor:
        return torch.cond(x.sum() > 0, lambda t: t.clamp(max=self.limit), lambda t: t * self.scale, (x,))
'''
