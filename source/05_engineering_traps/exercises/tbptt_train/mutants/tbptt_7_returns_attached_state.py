"""Detaches between chunks, but returns the final state with its graph attached."""
CELL = "tbptt_train"
KIND = "graph"
NOTE = "The returned state must be detached like the ones that cross chunk boundaries: as it is, it still carries the last chunk's graph and keeps it alive after the function returns."
FAILS = ['test_tbptt_state']
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
    return losses, detach_state(state)
''', '''
    return losses, state
'''),
]
