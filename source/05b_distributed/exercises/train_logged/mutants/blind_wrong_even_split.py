"""Splits the steps into ceil(len/log_every) near-equal chunks (torch.tensor_split / array_split style) instead of consecutive runs of log_every steps with only the last one shorter. (written blind, from the release alone)."""
CELL = 'train_logged'
KIND = 'wrong-value'
NOTE = 'Intervals are consecutive runs of log_every steps with only the last one shorter; splitting the steps into equal-sized chunks moves steps into the wrong interval.'
FAILS = ['test_logged_collectives', 'test_logged_values']
SOURCE = '''
def train_logged(model, batches, optimizer, log_every):
    """Train one step per batch; every log_every steps, the global per-sample mean loss, with one collective."""
    n_intervals = math.ceil(len(batches) / log_every)
    # which interval each step belongs to: split the step numbers into n_intervals chunks
    chunks = torch.arange(len(batches)).tensor_split(n_intervals)
    ends = {int(c[-1]) for c in chunks if len(c)}
    logged = []
    loss_sum, count = 0.0, 0
    for i, (x, y) in enumerate(batches):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        loss_sum += loss.item() * len(y)
        count += len(y)
        if i in ends:
            pair = torch.tensor([loss_sum, count], dtype=torch.float64)
            dist.all_reduce(pair)
            logged.append((pair[0] / pair[1]).item())
            loss_sum, count = 0.0, 0
    return logged
'''
