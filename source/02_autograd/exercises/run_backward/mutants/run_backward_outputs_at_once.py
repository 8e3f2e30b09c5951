"""Puts every output's node in the ready list at the start, even one that another output feeds."""
CELL = "run_backward"
KIND = "edge-case"
NOTE = "When one output is computed from another, the first output's node also receives a gradient from the second one's: it waits for it like any other node."
FAILS = ['test_run_backward_grad_outputs']
#: the reference solution with these lines changed (old, new)
CHANGES = [
('''
    runnable = [node for node in starts if waiting.get(node, 0) == 0]
''', '''
    runnable = list(starts)                                          # every output's node at once
'''),
('''
                if waiting[there] == 0:
''', '''
                if waiting[there] == 0 and there not in starts:
'''),
]
