"""Keeps the last gradient that arrives at a (node, slot) instead of their sum."""
CELL = "run_backward"
KIND = "wrong-value"
NOTE = 'Two gradients that arrive at the same (node, slot) (a tensor used twice, x * x) must be added; keeping only the last one loses a path.'
FAILS = ['test_run_backward_scalar', 'test_run_backward_grad_outputs', 'test_run_backward_inputs', 'test_run_backward_own_engine']
#: the reference solution with these lines changed (old, new)
CHANGES = [
('''
        sums[slot] = grad if sums[slot] is None else sums[slot] + grad
''', '''
        sums[slot] = grad                                            # the last one wins
'''),
]
