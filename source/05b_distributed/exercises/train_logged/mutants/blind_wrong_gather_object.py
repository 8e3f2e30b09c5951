"""Gathers every interval's local (sum, count) once at the end with all_gather_object: two collectives per call, too many when there is a single interval. (written blind, from the release alone)."""
CELL = 'train_logged'
KIND = 'contract'
NOTE = 'all_gather_object pickles and issues two collectives under the hood; a tensor collective of the local totals is one collective.'
FAILS = ['test_logged_collectives']
SOURCE = '''
def train_logged(model, batches, optimizer, log_every):
    """Train one step per batch; every log_every steps, the global per-sample mean loss, with one collective."""
    local = []                                   # one [loss sum, count] per interval, this rank only
    for i, (x, y) in enumerate(batches):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        if i % log_every == 0:
            local.append([0.0, 0])
        local[-1][0] += loss.item() * len(y)
        local[-1][1] += len(y)
    gathered = [None] * dist.get_world_size()
    dist.all_gather_object(gathered, local)      # just one meeting at the very end
    return [sum(r[k][0] for r in gathered) / sum(r[k][1] for r in gathered) for k in range(len(local))]
'''
