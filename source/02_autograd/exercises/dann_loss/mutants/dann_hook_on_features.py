"""The reversing hook registered on h itself: h feeds both heads, so the task gradient into the encoder is reversed too."""
CELL = "dann_loss"
KIND = "graph"
NOTE = "A hook on h acts on every gradient that reaches h, from both heads, so the task gradient into the encoder is reversed too; the reversal must sit where only the domain branch passes."
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
    h.register_hook(lambda g: -lambd * g)
    adv = F.cross_entropy(domain_head(h), domain)
    return task + adv
'''
