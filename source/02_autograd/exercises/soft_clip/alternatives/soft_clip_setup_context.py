"""setup_context style: saves the output and the limit, recovers t = y / limit and u = atanh(t) in backward."""
CELL = "soft_clip"
SOURCE = '''
class SoftClip(torch.autograd.Function):
    """limit * tanh(x / limit), with a hand-written backward for x and for a tensor limit."""

    @staticmethod
    def forward(x, limit):
        return limit * torch.tanh(x / limit)

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, limit = inputs
        if isinstance(limit, torch.Tensor):
            ctx.save_for_backward(x, output, limit)
            ctx.number = None
        else:
            ctx.save_for_backward(x, output)
            ctx.number = float(limit)

    @staticmethod
    def backward(ctx, grad_output):
        if ctx.number is None:
            x, y, limit = ctx.saved_tensors
        else:
            x, y = ctx.saved_tensors
            limit = ctx.number
        t = y / limit
        u = x / limit
        sech2 = 1 - t * t
        gx = grad_output * sech2 if ctx.needs_input_grad[0] else None
        gl = None
        if ctx.number is None and ctx.needs_input_grad[1]:
            gl = grad_output * (t - u * sech2)
            while gl.dim() > limit.dim():
                gl = gl.sum(0)
            for d in range(limit.dim()):
                if limit.shape[d] == 1 and gl.shape[d] != 1:
                    gl = gl.sum(d, keepdim=True)
        return gx, gl


def soft_clip(x: torch.Tensor, limit) -> torch.Tensor:
    """Return limit * tanh(x / limit), same shape and dtype as x, computed by SoftClip (limit: a number or a tensor)."""
    return SoftClip.apply(x, limit)
'''
