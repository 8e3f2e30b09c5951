"""Steps the optimizer after every micro-batch (no accumulation at all)."""
CELL = "train_accumulated"
KIND = "wrong-value"
NOTE = "Gradient accumulation steps the optimizer once per group, after the group's last backward: stepping after every micro-batch is ordinary training with smaller batches."
FAILS = ["test_accumulate_values", "test_accumulate_one_allreduce"]
SOURCE = '''
def train_accumulated(model, micro_batches, optimizer, accum_steps):
    losses = []
    for start in range(0, len(micro_batches), accum_steps):
        group = micro_batches[start:start + accum_steps]
        total = 0.0
        for j, (x, y) in enumerate(group):
            with (model.no_sync() if j < len(group) - 1 else contextlib.nullcontext()):
                loss = F.cross_entropy(model(x), y)
                (loss / len(group)).backward()
            optimizer.step()
            optimizer.zero_grad()
            total += loss.item()

        losses.append(total / len(group))
    return losses
'''
