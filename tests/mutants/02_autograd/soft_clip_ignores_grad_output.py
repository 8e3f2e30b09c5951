"""Returns the local derivatives without multiplying by grad_output: right only when grad_output is all ones."""
CELL = "soft_clip"
KIND = "wrong-value"
NOTE = "backward returns a vector-Jacobian product: grad_output times the local derivative. The local derivative alone is right only when the incoming gradient is all ones."
FAILS = ['test_soft_clip_backward', 'test_soft_clip_limit_grad', 'test_soft_clip_gradcheck']
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
            grad_limit = (t - u * (1 - t * t)).sum_to_size(limit.shape)
        return (1 - t * t), grad_limit


def soft_clip(x: torch.Tensor, limit) -> torch.Tensor:
    """Return limit * tanh(x / limit), same shape and dtype as x, computed by SoftClip (limit: a number or a tensor)."""
    return SoftClip.apply(x, limit)
'''
