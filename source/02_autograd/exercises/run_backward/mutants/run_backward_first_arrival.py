"""Runs a node as soon as its first gradient arrives (a walk with a visited set, no dependency counts)."""
CELL = "run_backward"
KIND = "wrong-value"
NOTE = 'A node reached along two paths must wait until both have delivered (dependency counts); run on the first arrival, it misses what comes later.'
FAILS = ['test_run_backward_scalar', 'test_run_backward_grad_outputs', 'test_run_backward_inputs', 'test_run_backward_own_engine']
#: the reference solution with these lines changed (old, new)
CHANGES = [
('''
    landed = {}
''', '''
    landed = {}
    queued = set(runnable)
'''),
('''
                waiting[there] -= 1
                if waiting[there] == 0:
                    runnable.append(there)
''', '''
                if there not in queued:                      # run it on what it has now
                    queued.add(there)
                    runnable.insert(0, there)
'''),
]
