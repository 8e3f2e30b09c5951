"""The reversal as arithmetic: (1 + lambd) * h.detach() - lambd * h has h's values and -lambd times its gradient."""
CELL = "dann_loss"
SOURCE = '''
def dann_loss(encoder, task_head, domain_head, x, y, domain, lambd=1.0):
    """Return task + adv (0-dim); in backward the domain branch's gradient reaches the encoder times -lambd."""
    h = encoder(x)
    keep = torch.nonzero(domain == 0).flatten()
    task = F.cross_entropy(task_head(h.index_select(0, keep)), y.index_select(0, keep)) if keep.numel() else \
        torch.zeros((), dtype=h.dtype)
    reversed_h = (1 + lambd) * h.detach() - lambd * h
    return task + F.cross_entropy(domain_head(reversed_h), domain)
'''
