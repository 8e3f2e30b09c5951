"""Decides no_sync with (i + 1) % accum_steps != 0: the last backward of a shorter last group runs under no_sync, so that group is never all-reduced. (written blind, from the release alone)."""
CELL = 'train_accumulated'
KIND = 'edge-case'
NOTE = "Whether to synchronise depends on the position within the group, not on a multiple of accum_steps: a shorter last group then ends under no_sync() and its gradients are never all-reduced."
FAILS = ['test_accumulate_one_allreduce', 'test_accumulate_values']
SOURCE = '''
def train_accumulated(model, micro_batches, optimizer, accum_steps):
    """Gradient accumulation under DDP, one all-reduce per group; returns this rank's group losses."""
    out, group_losses = [], []
    n = len(micro_batches)
    for i, (x, y) in enumerate(micro_batches):
        k = min(accum_steps, n - (i // accum_steps) * accum_steps)   # size of this group
        sync_now = (i + 1) % accum_steps == 0
        with (contextlib.nullcontext() if sync_now else model.no_sync()):
            loss = F.cross_entropy(model(x), y)
            (loss / k).backward()
        group_losses.append(loss.item())
        if sync_now or i == n - 1:
            optimizer.step()
            optimizer.zero_grad()
            out.append(sum(group_losses) / len(group_losses))
            group_losses = []
    return out
'''
