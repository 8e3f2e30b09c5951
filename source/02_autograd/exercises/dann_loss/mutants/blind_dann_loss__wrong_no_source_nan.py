"""Masks the target samples with ignore_index=-100: with no source sample in the batch the task loss is the mean of nothing, NaN, instead of 0. (written blind, from the release alone)."""
CELL = 'dann_loss'
KIND = 'edge-case'
NOTE = "With no source sample in the batch the task loss is a mean over nothing, which is NaN; the statement asks for a task loss of 0 in that case."
FAILS = ['test_dann_value', 'test_dann_heads']
SOURCE = '''
def dann_loss(encoder, task_head, domain_head, x, y, domain, lambd=1.0):
    """Return task + adv (0-dim); in backward the domain branch's gradient reaches the encoder times -lambd."""
    h = encoder(x)
    labels = y.masked_fill(domain != 0, -100)          # target labels are not real: ignore them
    task = F.cross_entropy(task_head(h), labels, ignore_index=-100)
    flipped = h.clone()
    flipped.register_hook(lambda g: -lambd * g)
    adv = F.cross_entropy(domain_head(flipped), domain)
    return task + adv
'''
