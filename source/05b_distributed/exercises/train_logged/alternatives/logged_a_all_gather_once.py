"""Keeps per-step (sum, count) rows locally and reduces them once per interval with one all_gather_object-free all_gather of a packed tensor."""
CELL = "train_logged"
SOURCE = '''
def train_logged(model, batches, optimizer, log_every):
    out, pending = [], []
    for i, (x, y) in enumerate(batches):
        optimizer.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x), y, reduction="sum")
        (loss / y.shape[0]).backward()
        optimizer.step()
        pending.append([loss.item(), float(y.shape[0])])
        if len(pending) == log_every or i == len(batches) - 1:
            mine = torch.tensor(pending, dtype=torch.float64).sum(0)
            every = [torch.empty_like(mine) for _ in range(dist.get_world_size())]
            dist.all_gather(every, mine)
            total = torch.stack(every).sum(0)
            out.append(float(total[0] / total[1]))
            pending = []
    return out
'''
