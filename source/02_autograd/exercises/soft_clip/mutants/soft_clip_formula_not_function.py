"""soft_clip written with torch ops (autograd differentiates it), SoftClip left unused: right values and gradients, but the exercise is the hand-written backward."""
CELL = "soft_clip"
KIND = "contract"
NOTE = "Writing the formula with torch ops lets autograd derive the gradient itself, so the custom Function and its hand-written backward are never used; the result has to come from the Function."
FAILS = ['test_soft_clip_uses_function']
SOURCE = '''
class SoftClip(torch.autograd.Function):
    """limit * tanh(x / limit), with a hand-written backward for x and for a tensor limit."""

    @staticmethod
    def forward(ctx, x, limit):
        ctx.is_tensor = isinstance(limit, torch.Tensor)
        if ctx.is_tensor:
            ctx.save_for_backward(x, limit)
        else:
            ctx.save_for_backward(x)
            ctx.limit = limit
        return limit * torch.tanh(x / limit)

    @staticmethod
    def backward(ctx, grad_output):
        if ctx.is_tensor:
            x, limit = ctx.saved_tensors
        else:
            (x,) = ctx.saved_tensors
            limit = ctx.limit
        u = x / limit
        t = torch.tanh(u)
        return grad_output * (1 - t * t), None


def soft_clip(x: torch.Tensor, limit) -> torch.Tensor:
    """Return limit * tanh(x / limit), same shape and dtype as x, computed by SoftClip (limit: a number or a tensor)."""
    return limit * torch.tanh(x / limit)
'''
