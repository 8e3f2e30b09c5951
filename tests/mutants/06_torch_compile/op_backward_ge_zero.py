"""The backward uses x >= 0 for the 2x branch: the gradient at exactly 0 is 0 instead of 0.5."""
CELL = "register_numpy_op"
FAILS = ["test_numpy_op_grad"]
SOURCE = '''
def register_numpy_op(name: str = "ch6::legacy_score"):
    """Register legacy_score as the custom op `name`, with a fake impl and an autograd formula; return the op."""
    @torch.library.custom_op(name, mutates_args=())
    def legacy_score_op(x: torch.Tensor) -> torch.Tensor:
        return legacy_score(x)

    @legacy_score_op.register_fake
    def _(x):
        return x.new_empty(x.shape)

    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * torch.where(x >= 0, 2 * x, torch.full_like(x, 0.5))

    legacy_score_op.register_autograd(backward, setup_context=setup_context)
    return legacy_score_op
'''
