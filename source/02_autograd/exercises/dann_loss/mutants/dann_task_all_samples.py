"""The task loss over every sample, the target samples' placeholder labels included."""
CELL = "dann_loss"
KIND = "wrong-value"
NOTE = "Only the source samples have labels: the task loss over every sample treats the target samples' placeholder entries as labels."
FAILS = ['test_dann_value', 'test_dann_heads', 'test_dann_encoder', 'test_dann_per_call']
SOURCE = '''
def dann_loss(encoder, task_head, domain_head, x, y, domain, lambd=1.0):
    """Return task + adv (0-dim); in backward the domain branch's gradient reaches the encoder times -lambd."""
    h = encoder(x)
    task = F.cross_entropy(task_head(h), y)
    flipped = h.clone()
    flipped.register_hook(lambda g: -lambd * g)
    return task + F.cross_entropy(domain_head(flipped), domain)
'''
