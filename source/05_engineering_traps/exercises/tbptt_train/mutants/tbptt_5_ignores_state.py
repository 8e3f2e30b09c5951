"""Always starts from init_state, ignoring the state argument: a stream cannot be continued."""
CELL = "tbptt_train"
KIND = "state"
NOTE = "A state passed in is the starting point: always starting from init_state means a stream split over two calls cannot continue where the first call stopped."
FAILS = ['test_tbptt_state']
#: the reference solution with these lines changed (old, new)
CHANGES = [
('''
    """Truncated BPTT over `sequence` (T + 1, batch, n_in); returns (chunk losses, detached final state)."""
''', ''),
('''

    if state is None:
        state = model.init_state(sequence.shape[1], sequence.dtype)
''', '''
    state = model.init_state(sequence.shape[1], sequence.dtype)
'''),
]
