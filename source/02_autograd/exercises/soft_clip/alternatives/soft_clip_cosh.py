"""Saves x and the limit as a tensor (numbers wrapped with torch.as_tensor), sech^2 through cosh, the broadcast gradient left for autograd to sum."""
CELL = "soft_clip"
SOURCE = '''
class SoftClip(torch.autograd.Function):
    """limit * tanh(x / limit), with a hand-written backward for x and for a tensor limit."""

    @staticmethod
    def forward(ctx, x, limit):
        ctx.limit_is_tensor = torch.is_tensor(limit)
        lim = limit if ctx.limit_is_tensor else torch.as_tensor(limit, dtype=x.dtype)
        ctx.save_for_backward(x, lim)
        return torch.tanh(x / lim) * lim

    @staticmethod
    def backward(ctx, grad_output):
        x, lim = ctx.saved_tensors
        u = x / lim
        sech2 = 1.0 / torch.cosh(u) ** 2
        grad_x = grad_output * sech2
        grad_lim = grad_output * (torch.tanh(u) - u * sech2) if ctx.limit_is_tensor else None
        return grad_x, grad_lim


def soft_clip(x: torch.Tensor, limit) -> torch.Tensor:
    """Return limit * tanh(x / limit), same shape and dtype as x, computed by SoftClip (limit: a number or a tensor)."""
    return SoftClip.apply(x, limit)
'''
