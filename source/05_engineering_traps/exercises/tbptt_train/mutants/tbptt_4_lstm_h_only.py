"""Detaches only the first tensor of a tuple state: an LSTM's cell state c still carries the previous chunk's graph."""
CELL = "tbptt_train"
KIND = "overfit"
NOTE = "An LSTM's state holds two tensors: detaching h alone leaves the cell state c attached to the previous chunk's graph. Every tensor of the state has to be detached."
FAILS = ['test_tbptt_losses', 'test_tbptt_graph_constant', 'test_tbptt_state']
#: the reference solution with these lines changed (old, new)
CHANGES = [
('''
    """Truncated BPTT over `sequence` (T + 1, batch, n_in); returns (chunk losses, detached final state)."""
''', ''),
('''
        return s.detach() if isinstance(s, torch.Tensor) else tuple(detach_state(t) for t in s)

''', '''
        return s.detach() if isinstance(s, torch.Tensor) else (s[0].detach(),) + tuple(s[1:])
'''),
]
