"""Correct: for each group, all but the last micro-batch in one no_sync block, the last one outside it. (written blind, from the release alone)."""
CELL = 'train_accumulated'
SOURCE = '''
def train_accumulated(model, micro_batches, optimizer, accum_steps):
    """Gradient accumulation under DDP, one all-reduce per group; returns this rank's group losses."""
    results = []
    groups = [micro_batches[i:i + accum_steps] for i in range(0, len(micro_batches), accum_steps)]
    for group in groups:
        k = len(group)
        losses = []
        with model.no_sync():
            for x, y in group[:-1]:
                loss = F.cross_entropy(model(x), y)
                (loss / k).backward()
                losses.append(loss.item())
        x, y = group[-1]
        loss = F.cross_entropy(model(x), y)
        (loss / k).backward()
        losses.append(loss.item())
        optimizer.step()
        optimizer.zero_grad()
        results.append(sum(losses) / k)
    return results
'''
