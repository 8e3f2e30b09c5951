"""Stacks the chunk's predictions into one mse_loss; detaches with torch.utils._pytree-free recursion through lists too."""
CELL = "tbptt_train"
SOURCE = '''
def _cut(s):
    if isinstance(s, torch.Tensor):
        return s.detach()
    return type(s)(_cut(t) for t in s)

def tbptt_train(model, sequence, chunk_len, optimizer, state=None):
    T = sequence.shape[0] - 1
    state = _cut(model.init_state(sequence.shape[1], dtype=sequence.dtype) if state is None else state)
    losses = []
    for start in range(0, T, chunk_len):
        idx = range(start, min(start + chunk_len, T))
        optimizer.zero_grad()
        preds = []
        for t in idx:
            y, state = model(sequence[t], state)
            preds.append(y)
        loss = F.mse_loss(torch.stack(preds), sequence[idx.start + 1: idx.stop + 1])
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        state = _cut(state)
    return losses, state
'''
