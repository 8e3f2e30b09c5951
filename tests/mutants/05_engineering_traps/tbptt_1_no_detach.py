"""Never detaches the hidden state: the second chunk's backward runs into the freed first graph."""
CELL = "tbptt_train"
FAILS = ["test_tbptt_losses", "test_tbptt_graph_constant", "test_tbptt_long_sequence"]
SOURCE = '''
def tbptt_train(model, sequence, chunk_len, optimizer):
    h = model.init_hidden(sequence.shape[1], sequence.dtype)
    losses = []
    steps = sequence.shape[0] - 1
    for start in range(0, steps, chunk_len):
        stop = min(start + chunk_len, steps)
        optimizer.zero_grad()
        loss = 0.0
        for t in range(start, stop):
            y, h = model(sequence[t], h)
            loss = loss + F.mse_loss(y, sequence[t + 1])
        loss = loss / (stop - start)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
'''
