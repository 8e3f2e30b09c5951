"""Clips with error_if_nonfinite=True (skipped when max_norm is inf): a group that overflows with a finite max_norm raises RuntimeError instead of being skipped. (written blind, from the release alone)."""
CELL = 'train_mixed'
KIND = 'edge-case'
NOTE = 'clip_grad_norm_(error_if_nonfinite=True) raises on an inf gradient, the very case GradScaler handles by skipping the step. Clip without it and let scaler.step decide.'
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
            scaler.scale(loss / n).backward()
            total += loss.item()
        scaler.unscale_(optimizer)
        if max_norm != float("inf"):  # inf clips nothing: skip the work
            # fail loudly rather than clip with a NaN/inf norm
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm, error_if_nonfinite=True)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
        losses.append(total / n)
    return losses
'''
