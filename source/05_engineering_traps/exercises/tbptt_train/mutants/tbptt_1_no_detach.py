"""Never detaches the state: the second chunk's backward runs into the freed first graph."""
CELL = "tbptt_train"
KIND = "graph"
NOTE = "A state carried out of a chunk still points into that chunk's graph, which backward() has already freed: the next chunk's backward tries to run through it. The state must cross chunk boundaries detached."
FAILS = ['test_tbptt_losses', 'test_tbptt_graph_constant', 'test_tbptt_state']
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
    return losses, detach_state(state)
''', '''
    return losses, state
'''),
]
