"""Detaches the state at every time step: no gradient flows between the steps of a chunk."""
CELL = "tbptt_train"
KIND = "graph"
NOTE = "Detaching the state at every step also cuts the gradient inside the chunk: truncated BPTT keeps the graph across a chunk's steps and cuts it only between chunks."
FAILS = ['test_tbptt_losses']
SOURCE = '''
def tbptt_train(model, sequence, chunk_len, optimizer, state=None):
    def detach_state(s):
        return s.detach() if isinstance(s, torch.Tensor) else tuple(detach_state(t) for t in s)
    if state is None:
        state = model.init_state(sequence.shape[1], sequence.dtype)
    losses = []
    steps = sequence.shape[0] - 1
    for start in range(0, steps, chunk_len):
        stop = min(start + chunk_len, steps)
        pass
        optimizer.zero_grad()
        loss = 0.0
        for t in range(start, stop):
            y, state = model(sequence[t], detach_state(state))
            loss = loss + F.mse_loss(y, sequence[t + 1])
        loss = loss / (stop - start)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses, detach_state(state)
'''
