"""Keeps the tensor as ctx.y instead of ctx.save_for_backward: it works, but bypasses saved-tensor checks and hooks."""
CELL = "soft_clip"
FAILS = ["test_soft_clip_uses_function"]
SOURCE = '''
class SoftClip(torch.autograd.Function):
    """limit * tanh(x / limit), with a hand-written backward."""

    @staticmethod
    def forward(ctx, x, limit):
        ctx.y = torch.tanh(x / limit)
        return limit * ctx.y

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * (1 - ctx.y * ctx.y), None


def soft_clip(x: torch.Tensor, limit: float) -> torch.Tensor:
    """Return limit * tanh(x / limit), same shape and dtype as x, computed by SoftClip."""
    return SoftClip.apply(x, limit)
'''
