"""Creates the initial state as float32 (hard-coded dtype): a float64 sequence fails (or is silently mixed). (written blind, from the release alone)."""
CELL = 'tbptt_train'
KIND = 'overfit'
NOTE = "The initial state must have the sequence's dtype: a state fixed to float32 does not match a float64 sequence and model."
FAILS = ['test_tbptt_losses', 'test_tbptt_state']
SOURCE = '''
def _detach(s):
    return s.detach() if isinstance(s, torch.Tensor) else tuple(_detach(t) for t in s)

def tbptt_train(model, sequence, chunk_len, optimizer, state=None):
    """Truncated BPTT over `sequence` (T + 1, batch, n_in); returns (chunk losses, detached final state)."""
    if state is None:
        state = model.init_state(sequence.shape[1], torch.float32)
    T = sequence.shape[0] - 1
    losses = []
    for start in range(0, T, chunk_len):
        state = _detach(state)
        optimizer.zero_grad()
        total, n = 0.0, 0
        for t in range(start, min(start + chunk_len, T)):
            y, state = model(sequence[t], state)
            total = total + F.mse_loss(y, sequence[t + 1])
            n += 1
        loss = total / n
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses, _detach(state)
'''
