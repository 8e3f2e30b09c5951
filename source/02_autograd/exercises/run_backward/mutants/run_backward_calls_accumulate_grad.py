"""Calls every node, AccumulateGrad included, and reads the leaves' gradients from .grad."""
CELL = "run_backward"
KIND = "mutation"
NOTE = "An AccumulateGrad node adds its gradient into its leaf's .grad when called: the one side effect of backward(), which torch.autograd.grad (and run_backward) must not have; read a leaf's gradient where it arrives instead."
FAILS = ['test_run_backward_scalar', 'test_run_backward_grad_outputs', 'test_run_backward_inputs', 'test_run_backward_own_engine']
#: the reference solution with these lines changed (old, new)
CHANGES = [
('''
            if type(node).__name__ == "AccumulateGrad" or all(g is None for g in sums):
''', '''
            if all(g is None for g in sums):
'''),
('''
    return tuple(landed.get(edge) for edge in wanted)
''', '''
    return tuple(t.grad if t.is_leaf else landed.get(edge) for t, edge in zip(ins, wanted))
'''),
]
