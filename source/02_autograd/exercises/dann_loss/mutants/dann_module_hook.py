"""Reverses with a backward hook registered on the domain head at every call: right once, but the hooks pile up and act on every later backward."""
CELL = "dann_loss"
KIND = "state"
NOTE = "A hook registered on a module at every call stays there: the hooks pile up and act on every later backward. A reversal should belong to tensors made in this call."
FAILS = ['test_dann_per_call']
SOURCE = '''
def dann_loss(encoder, task_head, domain_head, x, y, domain, lambd=1.0):
    """Return task + adv (0-dim); in backward the domain branch's gradient reaches the encoder times -lambd."""
    h = encoder(x)
    source = domain == 0
    if bool(source.any()):
        task = F.cross_entropy(task_head(h[source]), y[source])
    else:
        task = h.sum() * 0.0
    domain_head.register_full_backward_hook(lambda m, g_in, g_out: tuple(None if g is None else -lambd * g
                                                                          for g in g_in))
    adv = F.cross_entropy(domain_head(h), domain)
    return task + adv
'''
