"""Backpropagates the undivided scaled losses and divides the gradients by the group size only after clipping, so the clip bounds the group's gradient sum (effective bound n * max_norm). (written blind, from the release alone)."""
CELL = 'train_mixed'
KIND = 'wrong-value'
NOTE = 'Clipping the summed gradients and dividing afterwards bounds n times the mean gradient: max_norm must bound the gradient the optimizer uses, so divide each loss by the group size before backward.'
FAILS = ['test_mixed_clip']
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
            scaler.scale(loss).backward()  # sum of the group's gradients; averaged after unscaling
            total += loss.item()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        with torch.no_grad():
            for p in model.parameters():
                if p.grad is not None:
                    p.grad.div_(n)  # sum -> mean
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
        losses.append(total / n)
    return losses
'''
