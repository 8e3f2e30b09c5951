"""Delivers gradients as the node returns them, without summing a broadcast gradient down to its slot's shape."""
CELL = "run_backward"
KIND = "wrong-value"
NOTE = "A node returns a broadcast input's gradient in the broadcast shape; the engine sums it down to the shape of the receiving slot (validate_outputs)."
FAILS = ['test_run_backward_scalar', 'test_run_backward_grad_outputs']
#: the reference solution with these lines changed (old, new)
CHANGES = [
('''
        if list(grad.shape) != list(meta.shape):                     # the op broadcast this input: fold it back
            grad = grad.sum_to_size(meta.shape)
''', ''),
]
