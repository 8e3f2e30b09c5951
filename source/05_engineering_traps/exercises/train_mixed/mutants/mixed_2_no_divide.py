"""Backpropagates the whole scaled loss of every micro-batch: the gradient is the group's sum."""
CELL = "train_mixed"
KIND = "wrong-value"
NOTE = "Gradients add up in .grad over a group: without dividing each loss by the group's size the step uses the sum of the micro-batch gradients, k times the mean."
FAILS = ['test_mixed_values', 'test_mixed_overflow', 'test_mixed_clip']
SOURCE = '''
def train_mixed(model, micro_batches, optimizer, scaler, accum_steps, max_norm):
    losses = []
    for start in range(0, len(micro_batches), accum_steps):
        group = micro_batches[start:start + accum_steps]
        total = 0.0
        for x, y in group:
            loss = F.cross_entropy(model(x), y)
            scaler.scale(loss).backward()
            total += loss.item()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
        losses.append(total / len(group))
    return losses
'''
