"""Reduces the limit's gradient through x.shape[-1] (rows of features, then a sum for a 0-dim limit): right for every x with a dimension, an IndexError for a 0-dim x with a tensor limit (written blind from the student repository in the issue-28 review; the hidden tests missed it then)."""
CELL = "soft_clip"
KIND = "edge-case"
NOTE = "Folding the limit's gradient through x.shape[-1] assumes x has a last dimension: a 0-dim x has none. Sum over the dimensions limit was broadcast along (sum_to_size(limit.shape) does it for any shape)."
FAILS = ["test_soft_clip_limit_grad"]
SOURCE = '''
class SoftClip(torch.autograd.Function):
    """limit * tanh(x / limit), with a hand-written backward for x and for a tensor limit."""

    @staticmethod
    def forward(ctx, x, limit):
        ctx.limit_is_tensor = isinstance(limit, torch.Tensor)
        if ctx.limit_is_tensor:
            ctx.save_for_backward(x, limit)
        else:
            ctx.save_for_backward(x)
            ctx.limit = limit
        return limit * torch.tanh(x / limit)

    @staticmethod
    def backward(ctx, grad_output):
        if ctx.limit_is_tensor:
            x, limit = ctx.saved_tensors
        else:
            (x,) = ctx.saved_tensors
            limit = ctx.limit
        u = x / limit
        t = torch.tanh(u)
        grad_x = grad_output * (1 - t * t) if ctx.needs_input_grad[0] else None
        grad_limit = None
        if ctx.limit_is_tensor and ctx.needs_input_grad[1]:
            full = grad_output * (t - u * (1 - t * t))
            per_feature = full.reshape(-1, x.shape[-1]).sum(0)     # one value per feature
            grad_limit = per_feature.sum() if limit.dim() == 0 else per_feature
        return grad_x, grad_limit


def soft_clip(x: torch.Tensor, limit) -> torch.Tensor:
    """Return limit * tanh(x / limit), same shape and dtype as x, computed by SoftClip (limit: a number or a tensor)."""
    return SoftClip.apply(x, limit)
'''
