"""Wraps the forward in torch.autocast('cpu', bfloat16) itself; invisible on float64 models (autocast leaves float64 alone) but runs a float32 model's linears in bfloat16. (written blind, from the release alone)."""
CELL = 'train_mixed'
KIND = 'contract'
NOTE = "Opening autocast inside a training helper overrides the caller's choice of precision (and changes a float32 model's numbers). The caller wraps the call in autocast if they want it; the helper never does."
FAILS = ['test_mixed_calls']
SOURCE = '''
def train_mixed(model, micro_batches, optimizer, scaler, accum_steps, max_norm):
    """Scaled gradient accumulation: unscale, clip, step and update once per group; returns the group mean losses."""
    losses = []
    for first in range(0, len(micro_batches), accum_steps):
        group = micro_batches[first:first + accum_steps]
        n = len(group)
        total = 0.0
        for x, y in group:
            with torch.autocast("cpu", dtype=torch.bfloat16):  # mixed precision forward
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
