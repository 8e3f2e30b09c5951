"""Clears the gradients at the start of each group instead of after its step: they stay at the end."""
CELL = "train_mixed"
KIND = "state"
NOTE = "Clearing the gradients at the start of each group trains correctly but leaves the last group's gradients in .grad when the function returns, where the caller's next backward adds to them."
FAILS = ['test_mixed_calls']
SOURCE = '''
def train_mixed(model, micro_batches, optimizer, scaler, accum_steps, max_norm):
    losses = []
    for start in range(0, len(micro_batches), accum_steps):
        group = micro_batches[start:start + accum_steps]
        total = 0.0
        optimizer.zero_grad()
        for x, y in group:
            loss = F.cross_entropy(model(x), y)
            scaler.scale(loss / len(group)).backward()
            total += loss.item()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        scaler.step(optimizer)
        scaler.update()
        losses.append(total / len(group))
    return losses
'''
