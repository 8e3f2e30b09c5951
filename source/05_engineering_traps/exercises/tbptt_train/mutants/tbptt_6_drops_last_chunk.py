"""Only runs full chunks: the steps of a shorter last chunk are never trained on."""
CELL = "tbptt_train"
KIND = "edge-case"
NOTE = "When the steps do not divide evenly into chunks, the shorter last chunk is still trained on: its steps get a forward, a loss, a backward and an optimizer step too."
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
    for start in range(0, steps, chunk_len):
''', '''
    for start in range(0, steps - chunk_len + 1, chunk_len):
'''),
]
