"""Correct: saves x and the output y (plus the tensor limit); derivatives written from y / limit; a number limit kept on ctx; sum_to_size for the broadcast limit. (written blind, from the release alone)."""
CELL = 'soft_clip'
SOURCE = '''
class SoftClip(torch.autograd.Function):
    """limit * tanh(x / limit), with a hand-written backward for x and for a tensor limit."""

    @staticmethod
    def forward(ctx, x, limit):
        ctx.limit_is_tensor = isinstance(limit, torch.Tensor)
        y = limit * torch.tanh(x / limit)
        if ctx.limit_is_tensor:
            ctx.save_for_backward(x, y, limit)
        else:
            ctx.limit = float(limit)
            ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        if ctx.limit_is_tensor:
            x, y, limit = ctx.saved_tensors
        else:
            x, y = ctx.saved_tensors
            limit = ctx.limit
        t = y / limit                       # tanh(x / limit)
        sech2 = 1 - t * t
        grad_x = grad_output * sech2 if ctx.needs_input_grad[0] else None
        grad_limit = None
        if ctx.limit_is_tensor and ctx.needs_input_grad[1]:
            grad_limit = (grad_output * (t - (x / limit) * sech2)).sum_to_size(limit.shape)
        return grad_x, grad_limit


def soft_clip(x: torch.Tensor, limit) -> torch.Tensor:
    """Return limit * tanh(x / limit), same shape and dtype as x, computed by SoftClip (limit: a number or a tensor)."""
    return SoftClip.apply(x, limit)
'''
