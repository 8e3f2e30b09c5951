"""Clears the gradients after optimizer.step() instead of before the forward: gradients already on the model when the call starts are added into the first step (and the call leaves .grad as None). (written blind, from the release alone)."""
CELL = 'train_logged'
KIND = 'state'
NOTE = 'Clearing gradients after the step leaves whatever the model held before the call in the first step: clear them at the start of every step.'
FAILS = ['test_logged_collectives', 'test_logged_values']
SOURCE = '''
def train_logged(model, batches, optimizer, log_every):
    """Train one step per batch; every log_every steps, the global per-sample mean loss, with one collective."""
    logged = []
    running = [0.0, 0.0]
    for step, (x, y) in enumerate(batches, start=1):
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()            # tidy up for the next step
        running[0] += loss.item() * len(y)
        running[1] += len(y)
        if step % log_every == 0 or step == len(batches):
            pair = torch.tensor(running, dtype=torch.float64)
            dist.all_reduce(pair)
            logged.append(pair[0].item() / pair[1].item())
            running = [0.0, 0.0]
    return logged
'''
