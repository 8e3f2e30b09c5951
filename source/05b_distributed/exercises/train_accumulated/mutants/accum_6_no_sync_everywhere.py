"""Runs every micro-batch inside no_sync, the last one too: gradients are never averaged across ranks."""
CELL = "train_accumulated"
KIND = "contract"
NOTE = "When every micro-batch, the last one included, runs under no_sync(), DDP never all-reduces: each rank steps with its own gradients and the replicas drift apart."
FAILS = ['test_accumulate_values', 'test_accumulate_one_allreduce']
SOURCE = '''
def train_accumulated(model, micro_batches, optimizer, accum_steps):
    losses = []
    for start in range(0, len(micro_batches), accum_steps):
        group = micro_batches[start:start + accum_steps]
        total = 0.0
        for j, (x, y) in enumerate(group):
            with model.no_sync():
                loss = F.cross_entropy(model(x), y)
                (loss / len(group)).backward()
            total += loss.item()
        optimizer.step()
        optimizer.zero_grad()
        losses.append(total / len(group))
    return losses
'''
