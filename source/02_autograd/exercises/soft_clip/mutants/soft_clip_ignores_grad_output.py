"""Returns the local derivatives without multiplying by grad_output: right only when grad_output is all ones."""
CELL = "soft_clip"
KIND = "wrong-value"
NOTE = "backward returns a vector-Jacobian product: grad_output times the local derivative. The local derivative alone is right only when the incoming gradient is all ones."
FAILS = ['test_soft_clip_backward', 'test_soft_clip_limit_grad', 'test_soft_clip_gradcheck']
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
            grad_limit = (t - u * (1 - t * t)).sum_to_size(limit.shape)
        return (1 - t * t), grad_limit
'''),
]
