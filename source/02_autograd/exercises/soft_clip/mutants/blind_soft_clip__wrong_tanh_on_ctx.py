"""Saves x with save_for_backward but keeps the tensors tanh(x/limit) and a tensor limit as plain ctx attributes (no version check, kept alive by the node, a reference cycle for the output-shaped tensor). (written blind, from the release alone)."""
CELL = 'soft_clip'
KIND = 'contract'
NOTE = "Tensors kept as plain ctx attributes bypass save_for_backward: autograd neither checks them for in-place changes nor frees them after backward. Tensors that backward needs must be saved."
FAILS = ['test_soft_clip_uses_function']
SOURCE = '''
class SoftClip(torch.autograd.Function):
    """limit * tanh(x / limit), with a hand-written backward for x and for a tensor limit."""

    @staticmethod
    def forward(ctx, x, limit):
        t = torch.tanh(x / limit)
        ctx.save_for_backward(x)
        ctx.t = t                    # reuse the forward's tanh in backward
        ctx.limit = limit            # a number, or a tensor
        return limit * t

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        t, limit = ctx.t, ctx.limit
        grad_x = grad_output * (1 - t * t)
        grad_limit = None
        if isinstance(limit, torch.Tensor) and ctx.needs_input_grad[1]:
            grad_limit = (grad_output * (t - (x / limit) * (1 - t * t))).sum_to_size(limit.shape)
        return grad_x, grad_limit


def soft_clip(x: torch.Tensor, limit) -> torch.Tensor:
    """Return limit * tanh(x / limit), same shape and dtype as x, computed by SoftClip (limit: a number or a tensor)."""
    return SoftClip.apply(x, limit)
'''
