"""A gradient-reversal autograd.Function with lambd on ctx, and task loss as a mask-weighted mean over every row (the targets' placeholder labels replaced by class 0 first); a batch without source samples gets a plain zero, so the task head stays out of the loss."""
CELL = "dann_loss"
SOURCE = '''
class _GradReverse(torch.autograd.Function):
    @staticmethod
    def forward(ctx, h, lambd):
        ctx.lambd = lambd
        return h.view_as(h)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * (-ctx.lambd), None


def dann_loss(encoder, task_head, domain_head, x, y, domain, lambd=1.0):
    """Return task + adv (0-dim); in backward the domain branch's gradient reaches the encoder times -lambd."""
    h = encoder(x)
    source = domain == 0
    if source.any():
        weights = source.to(h.dtype)
        labels = torch.where(source, y, torch.zeros_like(y))     # a target sample's y is a placeholder, not a class
        per_sample = F.cross_entropy(task_head(h), labels, reduction="none")
        task = (per_sample * weights).sum() / weights.sum()
    else:
        task = torch.zeros((), dtype=h.dtype)                    # no task loss: the task head is not in the graph
    adv = F.cross_entropy(domain_head(_GradReverse.apply(h, lambd)), domain)
    return task + adv
'''
