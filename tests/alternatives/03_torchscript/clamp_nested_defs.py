"""Nested def branches using minimum/maximum, with the predicate as gt(sum, 0)."""
CELL = "clamp_or_scale"
SOURCE = '''
class ClampOrScale(nn.Module):
    """x.sum() > 0: clamp x into [-limit, limit]; otherwise: x * scale. Both branches kept via torch.cond."""

    def __init__(self, limit: float = 1.0, scale: float = 0.5) -> None:
        super().__init__()
        self.limit = limit
        self.scale = scale

    def forward(self, x: Tensor) -> Tensor:
        limit, scale = self.limit, self.scale

        def clamp_branch(t):
            return t.minimum(torch.full_like(t, limit)).maximum(torch.full_like(t, -limit))

        def scale_branch(t):
            return t * scale

        return torch.cond(torch.gt(x.sum(), 0), clamp_branch, scale_branch, (x,))
'''
