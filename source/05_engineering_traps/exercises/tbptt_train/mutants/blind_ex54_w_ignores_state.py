"""Always starts from model.init_state(...), ignoring the state argument: a continued stream restarts from zeros. (written blind, from the release alone)."""
CELL = 'tbptt_train'
KIND = 'contract'
NOTE = "A state passed in is the starting point: always starting from init_state means a stream split over two calls cannot continue where the first call stopped."
FAILS = ['test_tbptt_state']
SOURCE = '''
def _detach(s):
    return s.detach() if isinstance(s, torch.Tensor) else tuple(_detach(t) for t in s)

def tbptt_train(model, sequence, chunk_len, optimizer, state=None):
    """Truncated BPTT over `sequence` (T + 1, batch, n_in); returns (chunk losses, detached final state)."""
    state = model.init_state(sequence.shape[1], sequence.dtype)   # a fresh state for this sequence
    T = sequence.shape[0] - 1
    losses = []
    for start in range(0, T, chunk_len):
        steps = range(start, min(start + chunk_len, T))
        optimizer.zero_grad()
        chunk = []
        for t in steps:
            y, state = model(sequence[t], state)
            chunk.append(F.mse_loss(y, sequence[t + 1]))
        loss = torch.stack(chunk).mean()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        state = _detach(state)
    return losses, state
'''
