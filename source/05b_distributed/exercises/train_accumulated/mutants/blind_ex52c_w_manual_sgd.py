"""Updates the parameters by hand with the optimizer's lr instead of optimizer.step(): ignores momentum (and any other optimizer). (written blind, from the release alone)."""
CELL = 'train_accumulated'
KIND = 'contract'
NOTE = "Updating the parameters by hand with the learning rate is plain SGD: it ignores the optimizer's own state and settings (momentum, weight decay, or another optimizer entirely)."
FAILS = ['test_accumulate_one_allreduce', 'test_accumulate_values']
SOURCE = '''
def train_accumulated(model, micro_batches, optimizer, accum_steps):
    """Gradient accumulation under DDP, one all-reduce per group; returns this rank's group losses."""
    lr = optimizer.param_groups[0]["lr"]
    out = []
    for start in range(0, len(micro_batches), accum_steps):
        group = micro_batches[start:start + accum_steps]
        losses = []
        for j, (x, y) in enumerate(group):
            with (model.no_sync() if j < len(group) - 1 else contextlib.nullcontext()):
                loss = F.cross_entropy(model(x), y)
                (loss / len(group)).backward()
            losses.append(loss.item())
        with torch.no_grad():               # the SGD update
            for p in model.parameters():
                if p.grad is not None:
                    p -= lr * p.grad
        optimizer.zero_grad()
        out.append(sum(losses) / len(losses))
    return out
'''
