"""Sums the gradients at a slot in place (add_): the first one there may be a grad_outputs tensor, or a tensor a node also sent to another slot."""
CELL = "run_backward"
KIND = "mutation"
NOTE = "AddBackward0 sends the very same tensor to both of its inputs, and a seed is the caller's grad_outputs tensor: adding into it in place changes the other slot's gradient, or the caller's tensor."
FAILS = ['test_run_backward_scalar', 'test_run_backward_grad_outputs']
#: the reference solution with these lines changed (old, new)
CHANGES = [
('''
        sums[slot] = grad if sums[slot] is None else sums[slot] + grad
''', '''
        sums[slot] = grad if sums[slot] is None else sums[slot].add_(grad)
'''),
]
