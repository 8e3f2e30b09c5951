"""The limit's gradient forgets the limit inside the tanh: grad_output * tanh(x / limit), the product rule's first half only."""
CELL = "soft_clip"
KIND = "wrong-value"
NOTE = "The limit appears twice in limit * tanh(x / limit), outside and inside the tanh: its gradient needs the product rule and the chain rule, and this one keeps only the outer term."
FAILS = ['test_soft_clip_limit_grad', 'test_soft_clip_gradcheck']
#: the reference solution with these lines changed (old, new)
CHANGES = [
('''
        ctx.limit_is_tensor = isinstance(limit, torch.Tensor)
        if ctx.limit_is_tensor:
''', '''
        ctx.is_tensor = isinstance(limit, torch.Tensor)
        if ctx.is_tensor:
'''),
('''
    def backward(ctx, grad_output):
        if ctx.limit_is_tensor:
''', '''
    def backward(ctx, grad_output):
        if ctx.is_tensor:
'''),
('''
        grad_x = grad_output * (1 - t * t) if ctx.needs_input_grad[0] else None
''', ''),
('''
        if ctx.limit_is_tensor and ctx.needs_input_grad[1]:
            grad_limit = (grad_output * (t - u * (1 - t * t))).sum_to_size(limit.shape)
        return grad_x, grad_limit
''', '''
        if ctx.is_tensor and ctx.needs_input_grad[1]:
            grad_limit = (grad_output * t).sum_to_size(limit.shape)
        return grad_output * (1 - t * t), grad_limit
'''),
]
