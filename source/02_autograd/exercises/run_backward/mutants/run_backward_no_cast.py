"""Sums broadcast gradients down to the slot's shape but never casts them to the slot's dtype."""
CELL = "run_backward"
KIND = "edge-case"
NOTE = "Where a float32 tensor meets a float64 one, a node returns float64 gradients for both; the engine casts each to its slot's dtype, so the float32 leaf gets a float32 gradient."
FAILS = ['test_run_backward_scalar']
#: the reference solution with these lines changed (old, new)
CHANGES = [
('''
        grad = grad.to(meta.dtype)
''', ''),
]
