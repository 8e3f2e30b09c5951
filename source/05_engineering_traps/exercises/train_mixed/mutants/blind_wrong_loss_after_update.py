"""Recovers the group loss from the scaled losses but divides by scaler.get_scale() after update(): wrong whenever update() changed the scale (growth after growth_interval clean steps, or back-off). (written blind, from the release alone)."""
CELL = 'train_mixed'
KIND = 'state'
NOTE = 'scaler.update() can change the scale: a loss recovered by dividing scaled values by get_scale() after the update uses the wrong scale. Record each unscaled loss when it is computed.'
FAILS = ['test_mixed_overflow', 'test_mixed_values']
SOURCE = '''
def train_mixed(model, micro_batches, optimizer, scaler, accum_steps, max_norm):
    """Scaled gradient accumulation: unscale, clip, step and update once per group; returns the group mean losses."""
    losses = []
    for first in range(0, len(micro_batches), accum_steps):
        group = micro_batches[first:first + accum_steps]
        n = len(group)
        scaled_total = 0.0
        for x, y in group:
            loss = F.cross_entropy(model(x), y)
            scaled = scaler.scale(loss / n)
            scaled.backward()
            scaled_total += scaled.item()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
        losses.append(scaled_total / scaler.get_scale())  # unscale the logged loss
    return losses
'''
