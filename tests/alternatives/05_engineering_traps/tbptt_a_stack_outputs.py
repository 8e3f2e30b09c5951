"""Stacks the chunk's predictions into one mse_loss; detaches h at the end of each chunk."""
CELL = "tbptt_train"
SOURCE = '''
def tbptt_train(model, sequence, chunk_len, optimizer):
    T = sequence.shape[0] - 1
    h = model.init_hidden(sequence.shape[1], dtype=sequence.dtype)
    losses = []
    for start in range(0, T, chunk_len):
        idx = range(start, min(start + chunk_len, T))
        optimizer.zero_grad()
        preds = []
        for t in idx:
            y, h = model(sequence[t], h)
            preds.append(y)
        loss = F.mse_loss(torch.stack(preds), sequence[idx.start + 1: idx.stop + 1])
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        h = h.detach()
    return losses
'''
