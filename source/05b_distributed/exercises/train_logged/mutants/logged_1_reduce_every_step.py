"""Reduces each step's sum and count in that step, as the provided slow loop does, without its barrier: right values, too many collectives."""
CELL = "train_logged"
KIND = "contract"
NOTE = "A collective in every step makes every step wait for the slowest rank: running sums need no other rank, so only the end of an interval needs a collective."
FAILS = ["test_logged_collectives"]
SOURCE = '''
def train_logged(model, batches, optimizer, log_every):
    logged, loss_sum, count = [], 0.0, 0
    for step, (x, y) in enumerate(batches, 1):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        stats = torch.tensor([loss.item() * len(y), len(y)], dtype=torch.float64)
        dist.all_reduce(stats)
        loss_sum += stats[0].item()
        count += int(stats[1])
        if step % log_every == 0 or step == len(batches):
            logged.append(loss_sum / count)
            loss_sum, count = 0.0, 0
    return logged
'''
