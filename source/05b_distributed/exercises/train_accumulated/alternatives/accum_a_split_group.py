"""One no_sync block around all but the last micro-batch, then the last one outside; float losses summed with sum()."""
CELL = "train_accumulated"
SOURCE = '''
def train_accumulated(model, micro_batches, optimizer, accum_steps):
    out = []
    for start in range(0, len(micro_batches), accum_steps):
        *head, last = micro_batches[start:start + accum_steps]
        k = len(head) + 1
        values = []
        with model.no_sync():
            for x, y in head:
                loss = F.cross_entropy(model(x), y)
                loss.div(k).backward()
                values.append(loss.item())
        loss = F.cross_entropy(model(last[0]), last[1])
        loss.div(k).backward()
        values.append(loss.item())
        optimizer.step()
        optimizer.zero_grad(set_to_none=False)
        out.append(sum(values) / k)
    return out
'''
