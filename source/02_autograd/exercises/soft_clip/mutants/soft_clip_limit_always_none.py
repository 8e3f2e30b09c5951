"""Treats the limit as a constant even when it is a tensor that requires grad: returns None for it."""
CELL = "soft_clip"
KIND = "edge-case"
NOTE = "A tensor limit that requires grad is a learnable input: returning None for it means it never learns. None is right only when the limit is a plain number."
FAILS = ['test_soft_clip_limit_grad', 'test_soft_clip_gradcheck']
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
    return SoftClip.apply(x, limit)
'''
