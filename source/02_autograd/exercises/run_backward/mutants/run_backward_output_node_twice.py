"""Starts the walk from every output's node, once per output: two outputs of one node (unbind) count that node's edges twice."""
CELL = "run_backward"
KIND = "edge-case"
NOTE = 'Two outputs can come from one node (the pieces of unbind, the values of sort): walk that node once, or the nodes it feeds wait for gradients that never come.'
FAILS = ['test_run_backward_grad_outputs']
#: the reference solution with these lines changed (old, new)
CHANGES = [
('''
    frontier, known = list(starts), set(starts)
''', '''
    frontier, known = [out.grad_fn for out in outs], set(starts)     # one entry per output
'''),
]
