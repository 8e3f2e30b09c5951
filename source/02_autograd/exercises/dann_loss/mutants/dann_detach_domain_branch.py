"""The domain head gets h.detach(): it still learns, but the encoder never sees the domain loss (a stop, not a reversal)."""
CELL = "dann_loss"
KIND = "graph"
NOTE = "Detaching the domain branch stops its gradient instead of reversing it: the domain head still learns, but the encoder never receives minus lambd times the domain loss's gradient."
FAILS = ['test_dann_encoder', 'test_dann_per_call']
SOURCE = '''
def dann_loss(encoder, task_head, domain_head, x, y, domain, lambd=1.0):
    """Return task + adv (0-dim); in backward the domain branch's gradient reaches the encoder times -lambd."""
    h = encoder(x)
    source = domain == 0
    if bool(source.any()):
        task = F.cross_entropy(task_head(h[source]), y[source])
    else:
        task = h.sum() * 0.0
    adv = F.cross_entropy(domain_head(h.detach()), domain)
    return task + adv
'''
