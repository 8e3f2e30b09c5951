"""Returns zeros for an input no gradient reaches, instead of None."""
CELL = "run_backward"
KIND = "edge-case"
NOTE = 'With allow_unused=True, torch.autograd.grad returns None for an input the outputs do not depend on, not zeros; the statement asks the same.'
FAILS = ['test_run_backward_inputs']
#: the reference solution with these lines changed (old, new)
CHANGES = [
('''
    return tuple(landed.get(edge) for edge in wanted)
''', '''
    return tuple(landed.get(edge) if landed.get(edge) is not None else torch.zeros_like(t)
                 for t, edge in zip(ins, wanted))
'''),
]
