"""Branches as methods, with torch.clamp / torch.mul, and the predicate computed first."""
CELL = "clamp_or_scale"
SOURCE = '''
class ClampOrScale(nn.Module):
    """x.sum() > 0: clamp x into [-limit, limit]; otherwise: x * scale. Both branches kept via torch.cond."""

    def __init__(self, limit: float = 1.0, scale: float = 0.5) -> None:
        super().__init__()
        self.limit = limit
        self.scale = scale

    def _clamp(self, t: Tensor) -> Tensor:
        return torch.clamp(t, min=-self.limit, max=self.limit)

    def _scale(self, t: Tensor) -> Tensor:
        return torch.mul(t, self.scale)

    def forward(self, x: Tensor) -> Tensor:
        positive = torch.sum(x) > 0
        return torch.cond(positive, self._clamp, self._scale, [x])
'''
