"""Clears the gradients before every micro-batch: only the group's last one is stepped."""
CELL = "train_mixed"
KIND = "graph"
NOTE = "zero_grad before each micro-batch throws away what the earlier micro-batches of the group accumulated: the step then uses only the last micro-batch's gradient."
FAILS = ['test_mixed_values', 'test_mixed_calls', 'test_mixed_overflow', 'test_mixed_clip']
SOURCE = '''
def train_mixed(model, micro_batches, optimizer, scaler, accum_steps, max_norm):
    losses = []
    for start in range(0, len(micro_batches), accum_steps):
        group = micro_batches[start:start + accum_steps]
        total = 0.0
        for x, y in group:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            scaler.scale(loss / len(group)).backward()
            total += loss.item()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        scaler.step(optimizer)
        scaler.update()
        losses.append(total / len(group))
    return losses
'''
