"""Averages the task loss as a sum divided by the number of source samples (at least 1): right values, but with no source sample the task head gets zero gradients instead of none."""
CELL = "dann_loss"
KIND = "edge-case"
NOTE = 'Without source samples the task head takes no part in the loss (its .grad stay as they were); a sum over an empty selection divided by a count keeps it in the graph, and backward writes zeros.'
FAILS = ['test_dann_heads']
SOURCE = '''
def dann_loss(encoder, task_head, domain_head, x, y, domain, lambd=1.0):
    """Return task + adv (0-dim); in backward the domain branch's gradient reaches the encoder times -lambd."""
    h = encoder(x)
    source = domain == 0
    task = F.cross_entropy(task_head(h[source]), y[source], reduction="sum") / source.sum().clamp(min=1)
    flipped = h.clone()
    flipped.register_hook(lambda g: -lambd * g)
    adv = F.cross_entropy(domain_head(flipped), domain)
    return task + adv
'''
