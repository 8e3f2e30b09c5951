"""Two loops over slices of accum_steps; scale(loss / group size) backward; unscale_, clip_grad_norm_, scaler.step, update, zero_grad. (written blind, from the release alone)."""
CELL = 'train_mixed'
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
            scaler.scale(loss / n).backward()
            total += loss.item()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
        losses.append(total / n)
    return losses
'''
