"""Divides every loss by accum_steps, also in a shorter last group."""
CELL = "train_mixed"
KIND = "edge-case"
NOTE = "The last group can be shorter than accum_steps, or there may be fewer micro-batches than accum_steps: dividing by accum_steps instead of the group's actual size makes those gradients too small."
FAILS = ['test_mixed_values', 'test_mixed_overflow']
SOURCE = '''
def train_mixed(model, micro_batches, optimizer, scaler, accum_steps, max_norm):
    losses = []
    for start in range(0, len(micro_batches), accum_steps):
        group = micro_batches[start:start + accum_steps]
        total = 0.0
        for x, y in group:
            loss = F.cross_entropy(model(x), y)
            scaler.scale(loss / accum_steps).backward()
            total += loss.item()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
        losses.append(total / len(group))
    return losses
'''
