"""Keeps the set of nodes already walked in a module-level set: a second call on a graph it has seen skips their edges."""
CELL = "run_backward"
KIND = "state"
NOTE = 'Every call must start from tables of its own: a set of walked nodes kept from an earlier call on the same graph leaves their dependency counts uncounted, and the second call fails.'
FAILS = ['test_run_backward_grad_outputs', 'test_run_backward_inputs', 'test_run_backward_own_engine']
#: the reference solution with these lines changed (old, new)
CHANGES = [
('''
def run_backward(outputs, inputs, grad_outputs=None):
''', '''
_KNOWN = set()


def run_backward(outputs, inputs, grad_outputs=None):
'''),
('''
    frontier, known = list(starts), set(starts)
''', '''
    frontier, known = list(starts), _KNOWN                           # shared by every call
    known.update(starts)
'''),
]
