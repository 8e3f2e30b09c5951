"""Sums the step losses of a chunk instead of averaging them."""
CELL = "tbptt_train"
KIND = "wrong-value"
NOTE = "The chunk loss is the mean over its steps: summing the step losses scales the loss and its gradient by the number of steps in the chunk."
FAILS = ['test_tbptt_losses', 'test_tbptt_state']
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
        loss = loss / (stop - start)
''', '''
        loss = loss * 1
'''),
]
