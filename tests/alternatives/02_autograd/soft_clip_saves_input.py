"""Saves x (and limit on ctx) and recomputes tanh in backward; uses the sech^2 form."""
CELL = "soft_clip"
SOURCE = '''
class SoftClip(torch.autograd.Function):
    """limit * tanh(x / limit), with a hand-written backward."""

    @staticmethod
    def forward(ctx, x, limit):
        ctx.save_for_backward(x)
        ctx.limit = float(limit)
        return torch.tanh(x / limit) * limit

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        sech = 1.0 / torch.cosh(x / ctx.limit)
        grad_x = grad_output * sech * sech if ctx.needs_input_grad[0] else None
        return grad_x, None


def soft_clip(x: torch.Tensor, limit: float) -> torch.Tensor:
    """Return limit * tanh(x / limit), same shape and dtype as x, computed by SoftClip."""
    return SoftClip.apply(x, limit)
'''
