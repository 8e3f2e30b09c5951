"""Runs the encoder twice (once on the source rows for the task head, once on everything for the domain head): same gradients, twice the encoder's work."""
CELL = "dann_loss"
KIND = "contract"
NOTE = "The encoder must run once per call, its output feeding both heads: a second pass doubles the work, and with BatchNorm or dropout the two heads see different features."
FAILS = ['test_dann_per_call']
SOURCE = '''
def dann_loss(encoder, task_head, domain_head, x, y, domain, lambd=1.0):
    src = domain == 0
    task = F.cross_entropy(task_head(encoder(x[src])), y[src]) if src.any() else torch.zeros((), dtype=x.dtype)
    h2 = encoder(x)
    h2.register_hook(lambda g: -lambd * g)
    return task + F.cross_entropy(domain_head(h2), domain)
'''
