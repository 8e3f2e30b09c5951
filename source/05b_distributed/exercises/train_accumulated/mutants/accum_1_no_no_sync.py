"""Accumulates correctly but never uses no_sync: every micro-batch's backward all-reduces."""
CELL = "train_accumulated"
KIND = "contract"
NOTE = "Under DDP every backward all-reduces the gradients unless it runs inside model.no_sync(): accumulating without it gives the right numbers with one all-reduce per micro-batch instead of per group."
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
