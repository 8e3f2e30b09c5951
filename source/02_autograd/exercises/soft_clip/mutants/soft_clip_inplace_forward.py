"""Divides x in place to save memory (x.div_(limit)): the caller's x changes, and gradcheck's repeated calls see corrupted inputs. It also keeps a tensor limit as a ctx attribute (not saved with save_for_backward)."""
CELL = "soft_clip"
KIND = "mutation"
NOTE = "x.detach() shares x's storage, so dividing it in place changes the caller's x; forward must leave its inputs unchanged. A tensor limit also belongs in save_for_backward, not in a ctx attribute."
FAILS = ['test_soft_clip_forward', 'test_soft_clip_limit_grad', 'test_soft_clip_gradcheck', 'test_soft_clip_uses_function']
SOURCE = '''
class SoftClip(torch.autograd.Function):
    """limit * tanh(x / limit), with a hand-written backward for x and for a tensor limit."""

    @staticmethod
    def forward(ctx, x, limit):
        ctx.is_tensor = isinstance(limit, torch.Tensor)
        u = x.detach().div_(limit)
        t = torch.tanh(u)
        ctx.save_for_backward(u.clone(), t)
        ctx.limit = limit
        return limit * t

    @staticmethod
    def backward(ctx, grad_output):
        u, t = ctx.saved_tensors
        grad_limit = None
        if ctx.is_tensor and ctx.needs_input_grad[1]:
            grad_limit = (grad_output * (t - u * (1 - t * t))).sum_to_size(ctx.limit.shape)
        return grad_output * (1 - t * t), grad_limit


def soft_clip(x: torch.Tensor, limit) -> torch.Tensor:
    """Return limit * tanh(x / limit), same shape and dtype as x, computed by SoftClip (limit: a number or a tensor)."""
    return SoftClip.apply(x, limit)
'''
