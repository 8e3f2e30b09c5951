"""Saves only t = tanh(x / limit) and recovers u = atanh(t) for the limit's gradient: where tanh rounds to 1 (saturated logits, the very case soft-capping is for) u is inf and the gradient NaN."""
CELL = "soft_clip"
KIND = "edge-case"
NOTE = "Recovering x / limit from the saved tanh with atanh breaks where tanh rounds to 1 (the saturated case soft-capping is for): it gives inf, and the limit's gradient becomes NaN."
FAILS = ['test_soft_clip_limit_grad']
SOURCE = '''
class SoftClip(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, limit):
        t = torch.tanh(x / limit)
        ctx.tensor_limit = torch.is_tensor(limit)
        if ctx.tensor_limit:
            ctx.save_for_backward(t, limit)
        else:
            ctx.save_for_backward(t)
            ctx.limit = limit
        return limit * t

    @staticmethod
    def backward(ctx, g):
        if ctx.tensor_limit:
            t, limit = ctx.saved_tensors
        else:
            (t,) = ctx.saved_tensors
            limit = ctx.limit
        gx = g * (1 - t * t)
        gl = None
        if ctx.tensor_limit and ctx.needs_input_grad[1]:
            u = torch.atanh(t)
            gl = (g * (t - u * (1 - t * t))).sum_to_size(limit.shape)
        return gx, gl


def soft_clip(x, limit):
    return SoftClip.apply(x, limit)
'''
