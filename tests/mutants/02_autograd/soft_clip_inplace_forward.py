"""Saves memory in forward with x.div_(limit).tanh_(): the right values and gradient, but the caller's x is overwritten (and gradcheck fails)."""
CELL = "soft_clip"
FAILS = ["test_soft_clip_forward", "test_soft_clip_gradcheck"]
SOURCE = '''
class SoftClip(torch.autograd.Function):
    """limit * tanh(x / limit), with a hand-written backward."""

    @staticmethod
    def forward(ctx, x, limit):
        y = x.div_(limit).tanh_()
        ctx.save_for_backward(y)
        return limit * y

    @staticmethod
    def backward(ctx, grad_output):
        (y,) = ctx.saved_tensors
        return grad_output * (1 - y * y), None


def soft_clip(x: torch.Tensor, limit: float) -> torch.Tensor:
    """Return limit * tanh(x / limit), same shape and dtype as x, computed by SoftClip."""
    return SoftClip.apply(x, limit)
'''
