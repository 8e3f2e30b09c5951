"""Unscales, clips, steps and updates after every micro-batch: no accumulation."""
CELL = "train_mixed"
KIND = "wrong-value"
NOTE = 'Accumulation means one optimizer step and one scale update per group, after its last backward: stepping per micro-batch is plain training with small batches, and the scale may change inside a group.'
FAILS = ['test_mixed_values', 'test_mixed_calls', 'test_mixed_overflow', 'test_mixed_clip']
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
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
        losses.append(total / len(group))
    return losses
'''
