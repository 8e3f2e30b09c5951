"""The limit kept on the class (SoftClip.limit) instead of ctx: two calls in one graph both use the last limit."""
CELL = "soft_clip"
KIND = "state"
NOTE = "A limit stored on the Function class is shared by every call: with two calls in one graph, backward of both uses the last limit. Per-call data belongs on ctx."
FAILS = ['test_soft_clip_backward', 'test_soft_clip_limit_grad']
SOURCE = '''
class SoftClip(torch.autograd.Function):
    """limit * tanh(x / limit), with a hand-written backward for x and for a tensor limit."""

    @staticmethod
    def forward(ctx, x, limit):
        SoftClip.limit = limit
        ctx.save_for_backward(x)
        return limit * torch.tanh(x / limit)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        limit = SoftClip.limit
        u = x / limit
        t = torch.tanh(u)
        grad_limit = None
        if isinstance(limit, torch.Tensor) and ctx.needs_input_grad[1]:
            grad_limit = (grad_output * (t - u * (1 - t * t))).sum_to_size(limit.shape)
        return grad_output * (1 - t * t), grad_limit


def soft_clip(x: torch.Tensor, limit) -> torch.Tensor:
    """Return limit * tanh(x / limit), same shape and dtype as x, computed by SoftClip (limit: a number or a tensor)."""
    return SoftClip.apply(x, limit)
'''
