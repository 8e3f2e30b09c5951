"""Clips the gradients before unscale_: the clip sees scale times the true norm."""
CELL = "train_mixed"
KIND = "wrong-value"
NOTE = 'Until unscale_ runs, every gradient is multiplied by the scale: clipping then compares a norm thousands of times too large with max_norm and shrinks the true update to almost nothing.'
FAILS = ['test_mixed_clip', 'test_mixed_overflow']
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
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        scaler.unscale_(optimizer)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
        losses.append(total / len(group))
    return losses
'''
