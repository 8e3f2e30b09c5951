"""Clips with get_total_norm and clip_grads_with_norm_; the group end found by index."""
CELL = "train_mixed"
SOURCE = '''
def train_mixed(model, micro_batches, optimizer, scaler, accum_steps, max_norm):
    losses, running, count = [], 0.0, 0
    n = len(micro_batches)
    for i, (x, y) in enumerate(micro_batches):
        first = i - i % accum_steps
        size = min(accum_steps, n - first)
        loss = F.cross_entropy(model(x), y)
        scaler.scale(loss / size).backward()
        running += loss.item()
        count += 1
        if count == size:
            scaler.unscale_(optimizer)
            params = [p for p in model.parameters() if p.grad is not None]
            norm = torch.nn.utils.get_total_norm([p.grad for p in params])
            torch.nn.utils.clip_grads_with_norm_(params, max_norm, norm)
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
            losses.append(running / size)
            running, count = 0.0, 0
    return losses
'''
