"""The limit's gradient forgets the limit inside the tanh: grad_output * tanh(x / limit), the product rule's first half only."""
CELL = "soft_clip"
KIND = "wrong-value"
NOTE = "The limit appears twice in limit * tanh(x / limit), outside and inside the tanh: its gradient needs the product rule and the chain rule, and this one keeps only the outer term."
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
        grad_limit = None
        if ctx.is_tensor and ctx.needs_input_grad[1]:
            grad_limit = (grad_output * t).sum_to_size(limit.shape)
        return grad_output * (1 - t * t), grad_limit


def soft_clip(x: torch.Tensor, limit) -> torch.Tensor:
    """Return limit * tanh(x / limit), same shape and dtype as x, computed by SoftClip (limit: a number or a tensor)."""
    return SoftClip.apply(x, limit)
'''
