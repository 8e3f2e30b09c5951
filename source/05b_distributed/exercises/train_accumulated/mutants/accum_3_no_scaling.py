"""Backpropagates the unscaled loss: the accumulated gradient is the group's sum, not its mean."""
CELL = "train_accumulated"
KIND = "wrong-value"
NOTE = "Backpropagating each unscaled loss accumulates the sum of the group's gradients, not their mean: each micro-batch loss has to be scaled by the group's size."
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
                loss.backward()
            total += loss.item()
        optimizer.step()
        optimizer.zero_grad()
        losses.append(total / len(group))
    return losses
'''
