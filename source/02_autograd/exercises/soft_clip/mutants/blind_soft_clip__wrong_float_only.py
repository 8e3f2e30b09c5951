"""Tests isinstance(limit, float) to spot a number limit: an int limit (soft_clip(x, 3)) goes down the tensor path and save_for_backward raises. (written blind, from the release alone)."""
CELL = 'soft_clip'
KIND = 'edge-case'
NOTE = "A number limit may be a Python int as well as a float: treating everything that is not a float as a tensor sends an int limit to save_for_backward, which accepts only tensors."
FAILS = ['test_soft_clip_backward']
SOURCE = '''
class SoftClip(torch.autograd.Function):
    """limit * tanh(x / limit), with a hand-written backward for x and for a tensor limit."""

    @staticmethod
    def forward(ctx, x, limit):
        if isinstance(limit, float):
            ctx.limit = limit
            ctx.save_for_backward(x)
        else:
            ctx.limit = None
            ctx.save_for_backward(x, limit)
        return limit * torch.tanh(x / limit)

    @staticmethod
    def backward(ctx, grad_output):
        if ctx.limit is None:
            x, limit = ctx.saved_tensors
        else:
            (x,) = ctx.saved_tensors
            limit = ctx.limit
        u = x / limit
        t = torch.tanh(u)
        grad_x = grad_output * (1 - t * t)
        grad_limit = None
        if ctx.limit is None:
            grad_limit = (grad_output * (t - u * (1 - t * t))).sum_to_size(limit.shape)
        return grad_x, grad_limit


def soft_clip(x: torch.Tensor, limit) -> torch.Tensor:
    """Return limit * tanh(x / limit), same shape and dtype as x, computed by SoftClip (limit: a number or a tensor)."""
    return SoftClip.apply(x, limit)
'''
