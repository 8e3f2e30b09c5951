"""Calls the nodes with grad mode on: the gradients carry a recorded backward pass."""
CELL = "run_backward"
KIND = "graph"
NOTE = 'Called with grad mode on, a node records its backward ops, so the returned gradients require grad and hold a graph; the engine runs backward under no_grad (unless create_graph=True).'
FAILS = ['test_run_backward_own_engine']
#: the reference solution with these lines changed (old, new)
CHANGES = [
('''
    with torch.no_grad():                                            # the engine does not record the backward pass
''', '''
    if True:                                                         # grad mode stays on
'''),
]
