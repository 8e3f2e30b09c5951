"""Computes the per-sample cross-entropy on every sample, target ones included, then masks: a target sample's placeholder label (-1, or >= classes) makes cross_entropy raise. (written blind, from the release alone)."""
CELL = 'dann_loss'
KIND = 'edge-case'
NOTE = "Masking after the cross-entropy still sends the target samples' placeholder labels (-1, or past the last class) into cross_entropy, which raises on them; they must not reach it at all."
FAILS = ['test_dann_value', 'test_dann_heads']
SOURCE = '''
def dann_loss(encoder, task_head, domain_head, x, y, domain, lambd=1.0):
    """Return task + adv (0-dim); in backward the domain branch's gradient reaches the encoder times -lambd."""
    h = encoder(x)
    source = (domain == 0).to(h.dtype)
    per_sample = F.cross_entropy(task_head(h), y, reduction="none")
    task = (per_sample * source).sum() / source.sum().clamp(min=1.0)
    flipped = h.clone()
    flipped.register_hook(lambda g: -lambd * g)
    adv = F.cross_entropy(domain_head(flipped), domain)
    return task + adv
'''
