"""Sums the step losses of a chunk instead of averaging them."""
CELL = "tbptt_train"
KIND = "wrong-value"
NOTE = "The chunk loss is the mean over its steps: summing the step losses scales the loss and its gradient by the number of steps in the chunk."
FAILS = ['test_tbptt_losses', 'test_tbptt_state']
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
        loss = loss * 1
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses, detach_state(state)
'''
