"""Always starts from init_state, ignoring the state argument: a stream cannot be continued."""
CELL = "tbptt_train"
KIND = "state"
NOTE = "A state passed in is the starting point: always starting from init_state means a stream split over two calls cannot continue where the first call stopped."
FAILS = ['test_tbptt_state']
SOURCE = '''
def tbptt_train(model, sequence, chunk_len, optimizer, state=None):
    def detach_state(s):
        return s.detach() if isinstance(s, torch.Tensor) else tuple(detach_state(t) for t in s)
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
    return losses, detach_state(state)
'''
