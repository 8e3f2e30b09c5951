"""Runs the encoder twice (on the source subset for the task head, on the whole batch for the domain head): same numbers for a plain MLP, but BatchNorm/dropout encoders see two different batches and running statistics are updated twice. (written blind, from the release alone)."""
CELL = 'dann_loss'
KIND = 'contract'
NOTE = "The encoder must run once per call, its output feeding both heads: a second pass doubles the work, and with BatchNorm or dropout the two heads see different features."
FAILS = ['test_dann_per_call']
SOURCE = '''
def dann_loss(encoder, task_head, domain_head, x, y, domain, lambd=1.0):
    """Return task + adv (0-dim); in backward the domain branch's gradient reaches the encoder times -lambd."""
    source = domain == 0
    if source.any():
        task = F.cross_entropy(task_head(encoder(x[source])), y[source])
    else:
        task = torch.zeros((), dtype=x.dtype)
    h = encoder(x).clone()
    h.register_hook(lambda g: -lambd * g)
    adv = F.cross_entropy(domain_head(h), domain)
    return task + adv
'''
