"""Calls zero_grad() on the three modules inside dann_loss 'to start clean': gradients accumulated before the call (gradient accumulation over micro-batches) are wiped. (written blind, from the release alone)."""
CELL = 'dann_loss'
KIND = 'contract'
NOTE = "Building a loss must not touch .grad: zeroing gradients inside it wipes those accumulated before the call (earlier micro-batches, say). Clearing gradients is the training loop's job."
FAILS = ['test_dann_per_call', 'test_dann_heads']
SOURCE = '''
def dann_loss(encoder, task_head, domain_head, x, y, domain, lambd=1.0):
    """Return task + adv (0-dim); in backward the domain branch's gradient reaches the encoder times -lambd."""
    for module in (encoder, task_head, domain_head):
        module.zero_grad(set_to_none=True)
    h = encoder(x)
    source = domain == 0
    if source.any():
        task = F.cross_entropy(task_head(h[source]), y[source])
    else:
        task = h.sum() * 0.0
    flipped = h.clone()
    flipped.register_hook(lambda g: -lambd * g)
    adv = F.cross_entropy(domain_head(flipped), domain)
    return task + adv
'''
