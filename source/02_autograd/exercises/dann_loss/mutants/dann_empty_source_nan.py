"""No guard for a batch without source samples: the mean over an empty selection is NaN."""
CELL = "dann_loss"
KIND = "edge-case"
NOTE = "With no source sample in the batch the task loss is a mean over nothing, which is NaN; the statement asks for a task loss of 0 in that case."
FAILS = ['test_dann_value', 'test_dann_heads']
SOURCE = '''
def dann_loss(encoder, task_head, domain_head, x, y, domain, lambd=1.0):
    """Return task + adv (0-dim); in backward the domain branch's gradient reaches the encoder times -lambd."""
    h = encoder(x)
    source = domain == 0
    task = F.cross_entropy(task_head(h[source]), y[source])
    flipped = h.clone()
    flipped.register_hook(lambda g: -lambd * g)
    return task + F.cross_entropy(domain_head(flipped), domain)
'''
