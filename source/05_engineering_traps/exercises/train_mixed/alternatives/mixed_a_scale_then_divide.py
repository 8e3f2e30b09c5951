"""Divides the scaled loss (exact: the scale is a power of two), zero_grad before update, losses summed from a list."""
CELL = "train_mixed"
SOURCE = '''
def train_mixed(model, micro_batches, optimizer, scaler, accum_steps, max_norm):
    out = []
    i = 0
    while i < len(micro_batches):
        chunk = micro_batches[i:i + accum_steps]
        i += len(chunk)
        values = []
        for inputs, targets in chunk:
            loss = F.cross_entropy(model(inputs), targets)
            (scaler.scale(loss) / len(chunk)).backward()
            values.append(loss.item())
        scaler.unscale_(optimizer)
        nn.utils.clip_grad_norm_(model.parameters(), max_norm, foreach=False)
        if scaler.step(optimizer) is None:
            pass  # skipped: inf or NaN in the gradients
        optimizer.zero_grad(set_to_none=False)
        scaler.update()
        out.append(sum(values) / len(values))
    optimizer.zero_grad()
    return out
'''
