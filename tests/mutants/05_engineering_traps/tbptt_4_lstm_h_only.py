"""Detaches only the first tensor of a tuple state: an LSTM's cell state c still carries the previous chunk's graph."""
CELL = "tbptt_train"
KIND = "overfit"
NOTE = "An LSTM's state holds two tensors: detaching h alone leaves the cell state c attached to the previous chunk's graph. Every tensor of the state has to be detached."
FAILS = ['test_tbptt_losses', 'test_tbptt_graph_constant', 'test_tbptt_state']
SOURCE = '''
def tbptt_train(model, sequence, chunk_len, optimizer, state=None):
    def detach_state(s):
        return s.detach() if isinstance(s, torch.Tensor) else (s[0].detach(),) + tuple(s[1:])
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
    return losses, detach_state(state)
'''
