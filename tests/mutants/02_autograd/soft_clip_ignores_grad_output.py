"""backward returns the local derivative only and ignores grad_output (the chain rule is forgotten)."""
CELL = "soft_clip"
FAILS = ["test_soft_clip_backward", "test_soft_clip_gradcheck"]
SOURCE = '''
class SoftClip(torch.autograd.Function):
    """limit * tanh(x / limit), with a hand-written backward."""

    @staticmethod
    def forward(ctx, x, limit):
        y = torch.tanh(x / limit)
        ctx.save_for_backward(y)
        return limit * y

    @staticmethod
    def backward(ctx, grad_output):
        (y,) = ctx.saved_tensors
        return 1 - y * y, None


def soft_clip(x: torch.Tensor, limit: float) -> torch.Tensor:
    """Return limit * tanh(x / limit), same shape and dtype as x, computed by SoftClip."""
    return SoftClip.apply(x, limit)
'''
