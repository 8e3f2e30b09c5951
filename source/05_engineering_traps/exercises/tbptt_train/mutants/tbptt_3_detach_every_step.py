"""Detaches the state at every time step: no gradient flows between the steps of a chunk."""
CELL = "tbptt_train"
KIND = "graph"
NOTE = "Detaching the state at every step also cuts the gradient inside the chunk: truncated BPTT keeps the graph across a chunk's steps and cuts it only between chunks."
FAILS = ['test_tbptt_losses']
#: the reference solution with these lines changed (old, new)
CHANGES = [
('''
    """Truncated BPTT over `sequence` (T + 1, batch, n_in); returns (chunk losses, detached final state)."""
''', ''),
('''
        return s.detach() if isinstance(s, torch.Tensor) else tuple(detach_state(t) for t in s)

''', '''
        return s.detach() if isinstance(s, torch.Tensor) else tuple(detach_state(t) for t in s)
'''),
('''
        state = detach_state(state)
''', '''
        pass
'''),
('''
            y, state = model(sequence[t], state)
''', '''
            y, state = model(sequence[t], detach_state(state))
'''),
]
