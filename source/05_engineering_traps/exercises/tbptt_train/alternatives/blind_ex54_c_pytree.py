"""Correct: detach any state structure with torch.utils._pytree.tree_map, chunk boundaries from torch.arange(T).split. (written blind, from the release alone)."""
CELL = 'tbptt_train'
SOURCE = '''
from torch.utils._pytree import tree_map

def tbptt_train(model, sequence, chunk_len, optimizer, state=None):
    """Truncated BPTT over `sequence` (T + 1, batch, n_in); returns (chunk losses, detached final state)."""
    cut = lambda s: tree_map(lambda t: t.detach() if isinstance(t, torch.Tensor) else t, s)
    state = model.init_state(sequence.shape[1], sequence.dtype) if state is None else cut(state)
    losses = []
    for steps in torch.arange(sequence.shape[0] - 1).split(chunk_len):
        optimizer.zero_grad()
        step_losses = []
        for t in steps.tolist():
            y, state = model(sequence[t], state)
            step_losses.append(F.mse_loss(y, sequence[t + 1]))
        loss = torch.stack(step_losses).mean()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        state = cut(state)
    return losses, cut(state)
'''
