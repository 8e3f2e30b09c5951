"""Logs the group loss as scaled.item()/scale: right for clean groups, but an overflowing group reports inf instead of its finite unscaled loss. (written blind, from the release alone)."""
CELL = 'train_mixed'
KIND = 'edge-case'
NOTE = 'When the scaled loss overflows, scaled/scale is inf even though the loss itself is finite. Record the unscaled loss (loss.item()), not the scaled one divided back.'
FAILS = ['test_mixed_overflow']
SOURCE = '''
def train_mixed(model, micro_batches, optimizer, scaler, accum_steps, max_norm):
    """Scaled gradient accumulation: unscale, clip, step and update once per group; returns the group mean losses."""
    losses = []
    for first in range(0, len(micro_batches), accum_steps):
        group = micro_batches[first:first + accum_steps]
        n = len(group)
        total = 0.0
        for x, y in group:
            loss = F.cross_entropy(model(x), y)
            scaled = scaler.scale(loss / n)
            scaled.backward()
            total += scaled.item() / scaler.get_scale()  # unscaled share of the mean, no extra .item() on loss
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
        losses.append(total)
    return losses
'''
