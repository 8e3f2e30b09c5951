"""An identity Function whose backward passes grad_output through: it agrees with its own forward, and nothing else."""
CELL = "soft_clip"
KIND = "do-nothing"
NOTE = "The answer does not do the work the statement asks for yet: forward returns its input and backward passes the gradient through unchanged."
FAILS = ['test_soft_clip_forward', 'test_soft_clip_backward', 'test_soft_clip_limit_grad', 'test_soft_clip_gradcheck', 'test_soft_clip_uses_function']
SOURCE = '''
class SoftClip(torch.autograd.Function):
    """limit * tanh(x / limit), with a hand-written backward for x and for a tensor limit."""

    @staticmethod
    def forward(ctx, x, limit):
        ctx.save_for_backward(x)
        return x.clone()

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output, None


def soft_clip(x: torch.Tensor, limit) -> torch.Tensor:
    """Return limit * tanh(x / limit), same shape and dtype as x, computed by SoftClip (limit: a number or a tensor)."""
    return SoftClip.apply(x, limit)
'''
