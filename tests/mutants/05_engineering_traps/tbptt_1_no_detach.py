"""Never detaches the state: the second chunk's backward runs into the freed first graph."""
CELL = "tbptt_train"
KIND = "graph"
NOTE = "A state carried out of a chunk still points into that chunk's graph, which backward() has already freed: the next chunk's backward tries to run through it. The state must cross chunk boundaries detached."
FAILS = ['test_tbptt_losses', 'test_tbptt_graph_constant', 'test_tbptt_state']
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
            y, state = model(sequence[t], state)
            loss = loss + F.mse_loss(y, sequence[t + 1])
        loss = loss / (stop - start)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses, state
'''
