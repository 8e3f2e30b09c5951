"""Turns a number limit into a 1-element 1-D tensor (x.new_tensor([limit])): for a 0-dim x the output has shape (1,) instead of x's shape (). (written blind, from the release alone)."""
CELL = 'soft_clip'
KIND = 'edge-case'
NOTE = "Turning a number limit into a 1-element 1-D tensor changes broadcasting: for a 0-dim x the output gets shape (1,) instead of x's shape ()."
FAILS = ['test_soft_clip_forward']
SOURCE = '''
class SoftClip(torch.autograd.Function):
    """limit * tanh(x / limit), with a hand-written backward for x and for a tensor limit."""

    @staticmethod
    def forward(ctx, x, limit):
        ctx.number_limit = not isinstance(limit, torch.Tensor)
        if ctx.number_limit:
            limit = x.new_tensor([float(limit)])      # one code path for both kinds of limit
        ctx.save_for_backward(x, limit)
        return limit * torch.tanh(x / limit)

    @staticmethod
    def backward(ctx, grad_output):
        x, limit = ctx.saved_tensors
        u = x / limit
        t = torch.tanh(u)
        grad_x = grad_output * (1 - t * t)
        if ctx.number_limit:
            return grad_x, None
        grad_limit = (grad_output * (t - u * (1 - t * t))).sum_to_size(limit.shape)
        return grad_x, grad_limit


def soft_clip(x: torch.Tensor, limit) -> torch.Tensor:
    """Return limit * tanh(x / limit), same shape and dtype as x, computed by SoftClip (limit: a number or a tensor)."""
    return SoftClip.apply(x, limit)
'''
