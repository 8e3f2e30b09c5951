"""Detaches the state with state.detach(): fine for TinyRNN's tensor, crashes on TinyLSTM's (h, c) tuple. (written blind, from the release alone)."""
CELL = 'tbptt_train'
KIND = 'edge-case'
NOTE = "The state can be a tensor or a tuple of tensors (an LSTM's (h, c)), and a tuple has no .detach(): detaching has to handle both structures."
FAILS = ['test_tbptt_graph_constant', 'test_tbptt_losses', 'test_tbptt_state']
SOURCE = '''
def tbptt_train(model, sequence, chunk_len, optimizer, state=None):
    """Truncated BPTT over `sequence` (T + 1, batch, n_in); returns (chunk losses, detached final state)."""
    if state is None:
        state = model.init_state(sequence.shape[1], sequence.dtype)
    T = sequence.shape[0] - 1
    losses = []
    for start in range(0, T, chunk_len):
        stop = min(start + chunk_len, T)
        state = state.detach()
        optimizer.zero_grad()
        loss = 0.0
        for t in range(start, stop):
            y, state = model(sequence[t], state)
            loss = loss + F.mse_loss(y, sequence[t + 1])
        loss = loss / (stop - start)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses, state.detach()
'''
