"""Detaches the state after every time step: the graph is constant, but gradients no longer flow through the steps of a chunk. (written blind, from the release alone)."""
CELL = 'tbptt_train'
KIND = 'graph'
NOTE = "Detaching the state at every step also cuts the gradient inside the chunk: truncated BPTT keeps the graph across a chunk's steps and cuts it only between chunks."
FAILS = ['test_tbptt_losses']
SOURCE = '''
def _detach(s):
    return s.detach() if isinstance(s, torch.Tensor) else tuple(_detach(t) for t in s)

def tbptt_train(model, sequence, chunk_len, optimizer, state=None):
    """Truncated BPTT over `sequence` (T + 1, batch, n_in); returns (chunk losses, detached final state)."""
    if state is None:
        state = model.init_state(sequence.shape[1], sequence.dtype)
    state = _detach(state)
    T = sequence.shape[0] - 1
    losses = []
    for start in range(0, T, chunk_len):
        optimizer.zero_grad()
        chunk = []
        for t in range(start, min(start + chunk_len, T)):
            y, state = model(sequence[t], state)
            state = _detach(state)            # never keep a graph in the state
            chunk.append(F.mse_loss(y, sequence[t + 1]))
        loss = sum(chunk) / len(chunk)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses, state
'''
