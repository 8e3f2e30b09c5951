"""Puts only the backward inside no_sync: DDP decided in forward() to sync, so every backward still all-reduces."""
CELL = "train_accumulated"
KIND = "graph"
NOTE = "DDP decides during forward() whether the following backward synchronises: putting only the backward inside no_sync() is too late, and every micro-batch is still all-reduced."
FAILS = ['test_accumulate_one_allreduce']
SOURCE = '''
def train_accumulated(model, micro_batches, optimizer, accum_steps):
    losses = []
    for start in range(0, len(micro_batches), accum_steps):
        group = micro_batches[start:start + accum_steps]
        total = 0.0
        for j, (x, y) in enumerate(group):
            loss = F.cross_entropy(model(x), y)
            with (model.no_sync() if j < len(group) - 1 else contextlib.nullcontext()):
                (loss / len(group)).backward()
            total += loss.item()
        optimizer.step()
        optimizer.zero_grad()
        losses.append(total / len(group))
    return losses
'''
