"""Folds a broadcast gradient by summing over its first dimension only: right for a bias added to rows, wrong for a 0-dim scale or other broadcasts."""
CELL = "run_backward"
KIND = "overfit"
NOTE = "A bias broadcast over the rows is one broadcast among many: a 0-dim scale, a (1, n) row or a size-1 dimension in the middle all need the gradient summed down to the slot's exact shape (sum_to_size)."
FAILS = ['test_run_backward_scalar']
#: the reference solution with these lines changed (old, new)
CHANGES = [
('''
            grad = grad.sum_to_size(meta.shape)
''', '''
            grad = grad.sum(0)                                       # a bias over rows
'''),
]
