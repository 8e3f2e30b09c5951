"""Wrong derivative: the inner 1/limit is multiplied in again, so the gradient is off by a factor of limit."""
CELL = "soft_clip"
FAILS = ["test_soft_clip_backward", "test_soft_clip_gradcheck"]
SOURCE = '''
class SoftClip(torch.autograd.Function):
    """limit * tanh(x / limit), with a hand-written backward."""

    @staticmethod
    def forward(ctx, x, limit):
        ctx.save_for_backward(x)
        ctx.limit = limit
        return limit * torch.tanh(x / limit)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        t = torch.tanh(x / ctx.limit)
        return grad_output * (1 - t * t) / ctx.limit, None


def soft_clip(x: torch.Tensor, limit: float) -> torch.Tensor:
    """Return limit * tanh(x / limit), same shape and dtype as x, computed by SoftClip."""
    return SoftClip.apply(x, limit)
'''
