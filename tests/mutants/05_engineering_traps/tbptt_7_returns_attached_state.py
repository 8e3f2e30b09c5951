"""Detaches between chunks, but returns the final state with its graph attached."""
CELL = "tbptt_train"
KIND = "graph"
NOTE = "The returned state must be detached like the ones that cross chunk boundaries: as it is, it still carries the last chunk's graph and keeps it alive after the function returns."
FAILS = ['test_tbptt_state']
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
        state = detach_state(state)
        optimizer.zero_grad()
        loss = 0.0
        for t in range(start, stop):
            y, state = model(sequence[t], state)
            loss = loss + F.mse_loss(y, sequence[t + 1])
        loss = loss / (stop - start)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses, state
'''
