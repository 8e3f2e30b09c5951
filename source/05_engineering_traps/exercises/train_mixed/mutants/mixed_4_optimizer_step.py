"""Unscales and clips, then calls optimizer.step() itself: an overflowing group writes NaN."""
CELL = "train_mixed"
KIND = "contract"
NOTE = 'Only scaler.step(optimizer) skips the update when unscale_ found inf or NaN: calling optimizer.step() yourself applies the overflowed gradients and fills the parameters with NaN.'
FAILS = ['test_mixed_calls', 'test_mixed_overflow']
SOURCE = '''
def train_mixed(model, micro_batches, optimizer, scaler, accum_steps, max_norm):
    losses = []
    for start in range(0, len(micro_batches), accum_steps):
        group = micro_batches[start:start + accum_steps]
        total = 0.0
        for x, y in group:
            loss = F.cross_entropy(model(x), y)
            scaler.scale(loss / len(group)).backward()
            total += loss.item()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        optimizer.step()
        scaler.update()
        optimizer.zero_grad()
        losses.append(total / len(group))
    return losses
'''
