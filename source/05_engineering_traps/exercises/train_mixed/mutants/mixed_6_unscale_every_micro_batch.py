"""Calls unscale_ after every micro-batch's backward: the second call of a group raises."""
CELL = "train_mixed"
KIND = "contract"
NOTE = 'unscale_ may run once per optimizer between two update() calls: unscaling after each micro-batch raises at the second one, and would divide the earlier gradients twice.'
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
