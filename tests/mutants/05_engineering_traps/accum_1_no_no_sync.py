"""Accumulates correctly but never uses no_sync: every micro-batch's backward all-reduces."""
CELL = "train_accumulated"
KIND = "contract"
FAILS = ['test_accumulate_one_allreduce']
SOURCE = '''
def train_accumulated(model, micro_batches, optimizer, accum_steps):
    losses = []
    for start in range(0, len(micro_batches), accum_steps):
        group = micro_batches[start:start + accum_steps]
        total = 0.0
        for j, (x, y) in enumerate(group):
            loss = F.cross_entropy(model(x), y)
            (loss / len(group)).backward()
            total += loss.item()
        optimizer.step()
        optimizer.zero_grad()
        losses.append(total / len(group))
    return losses
'''
