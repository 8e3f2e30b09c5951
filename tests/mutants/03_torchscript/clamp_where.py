"""torch.where instead of torch.cond: right numbers, but no control flow in the graph (both branches always run)."""
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
        return torch.where(x.sum() > 0, x.clamp(-self.limit, self.limit), x * self.scale)
'''
