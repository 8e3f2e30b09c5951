"""Weights each micro-batch by its number of rows (mean over samples) instead of dividing by the group's number of micro-batches; identical only when all micro-batches have the same size. (written blind, from the release alone)."""
CELL = 'train_mixed'
KIND = 'wrong-value'
NOTE = "The group's gradient is the mean over its micro-batches, each already a mean over its rows: weighting by rows gives another average whenever the micro-batches differ in size."
FAILS = ['test_mixed_values']
SOURCE = '''
def train_mixed(model, micro_batches, optimizer, scaler, accum_steps, max_norm):
    """Scaled gradient accumulation: unscale, clip, step and update once per group; returns the group mean losses."""
    losses = []
    for first in range(0, len(micro_batches), accum_steps):
        group = micro_batches[first:first + accum_steps]
        n = len(group)
        rows = sum(x.shape[0] for x, _ in group)  # weight each micro-batch by its rows: the mean over the group's samples
        total = 0.0
        for x, y in group:
            loss = F.cross_entropy(model(x), y)
            share = x.shape[0] / rows
            scaler.scale(loss * share).backward()
            total += loss.item() * share
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
        losses.append(total)
    return losses
'''
