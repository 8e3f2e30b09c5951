"""One flat loop with group boundaries by index, a hand-written clip over the optimizer's parameters, losses kept as a list of lists. (written blind, from the release alone)."""
CELL = 'train_mixed'
SOURCE = '''
import math

def train_mixed(model, micro_batches, optimizer, scaler, accum_steps, max_norm):
    """Scaled gradient accumulation: unscale, clip, step and update once per group; returns the group mean losses."""
    params = [p for g in optimizer.param_groups for p in g["params"]]
    count = len(micro_batches)
    group_losses = []
    for i, (x, y) in enumerate(micro_batches):
        start = (i // accum_steps) * accum_steps
        size = min(accum_steps, count - start)
        if i == start:
            group_losses.append([])
        loss = F.cross_entropy(model(x), y)
        group_losses[-1].append(loss.item())
        scaler.scale(loss).div(size).backward()
        if i == start + size - 1:  # the group's last backward
            scaler.unscale_(optimizer)
            grads = [p.grad for p in params if p.grad is not None]
            if grads and max_norm != math.inf:
                norm = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads]))
                coef = torch.clamp(max_norm / (norm + 1e-6), max=1.0)
                with torch.no_grad():
                    for g in grads:
                        g.mul_(coef.to(g.dtype))
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad(set_to_none=True)
    return [math.fsum(ls) / len(ls) for ls in group_losses]
'''
