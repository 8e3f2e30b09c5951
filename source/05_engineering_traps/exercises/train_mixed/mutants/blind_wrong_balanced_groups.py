"""Splits the micro-batches into ceil(len/accum_steps) balanced groups (like np.array_split), so e.g. 7 micro-batches with accum_steps=3 give 3,2,2 instead of 3,3,1. (written blind, from the release alone)."""
CELL = 'train_mixed'
KIND = 'edge-case'
NOTE = 'Groups of accum_steps consecutive micro-batches leave the remainder in the last group (7 with 3: 3, 3, 1); balancing them (3, 2, 2) changes which batches share an optimizer step.'
FAILS = ['test_mixed_calls', 'test_mixed_overflow', 'test_mixed_values']
SOURCE = '''
import math

def train_mixed(model, micro_batches, optimizer, scaler, accum_steps, max_norm):
    """Scaled gradient accumulation: unscale, clip, step and update once per group; returns the group mean losses."""
    losses = []
    n_groups = math.ceil(len(micro_batches) / accum_steps)
    per, extra = divmod(len(micro_batches), n_groups)  # split evenly into the same number of groups
    first = 0
    for k in range(n_groups):
        size = per + (1 if k < extra else 0)
        group = micro_batches[first:first + size]
        first += size
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
