"""Divides every loss by accum_steps, also in a shorter last group."""
CELL = "train_accumulated"
KIND = "edge-case"
NOTE = "The last group can be shorter than accum_steps: scaling its losses by accum_steps instead of by the group's actual size makes that group's gradient too small."
FAILS = ['test_accumulate_values']
SOURCE = '''
def train_accumulated(model, micro_batches, optimizer, accum_steps):
    losses = []
    for start in range(0, len(micro_batches), accum_steps):
        group = micro_batches[start:start + accum_steps]
        total = 0.0
        for j, (x, y) in enumerate(group):
            with (model.no_sync() if j < len(group) - 1 else contextlib.nullcontext()):
                loss = F.cross_entropy(model(x), y)
                (loss / accum_steps).backward()
            total += loss.item()
        optimizer.step()
        optimizer.zero_grad()
        losses.append(total / len(group))
    return losses
'''
