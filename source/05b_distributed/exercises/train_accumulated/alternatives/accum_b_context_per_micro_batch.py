"""A context chosen per micro-batch, counted from 0 (the earlier reference): model.no_sync() unless it is the group's last."""
CELL = "train_accumulated"
SOURCE = '''
def train_accumulated(model, micro_batches, optimizer, accum_steps):
    losses = []
    for start in range(0, len(micro_batches), accum_steps):
        group = micro_batches[start:start + accum_steps]
        total = 0.0
        for j, (x, y) in enumerate(group):
            sync = j == len(group) - 1
            with (contextlib.nullcontext() if sync else model.no_sync()):
                loss = F.cross_entropy(model(x), y)
                (loss / len(group)).backward()
            total += loss.item()
        optimizer.step()
        optimizer.zero_grad()
        losses.append(total / len(group))
    return losses
'''
