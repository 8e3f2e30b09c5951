"""Correct: a gradient-reversal autograd.Function with lambd on ctx on the domain branch only; source mask; zero task (kept in the graph) when there is no source sample. (written blind, from the release alone)."""
CELL = 'dann_loss'
SOURCE = '''
class _ReverseGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, t, lambd):
        ctx.lambd = lambd
        return t.view_as(t)

    @staticmethod
    def backward(ctx, grad_output):
        return -ctx.lambd * grad_output, None


def dann_loss(encoder, task_head, domain_head, x, y, domain, lambd=1.0):
    """Return task + adv (0-dim); in backward the domain branch's gradient reaches the encoder times -lambd."""
    h = encoder(x)
    source = domain == 0
    if bool(source.any()):
        task = F.cross_entropy(task_head(h[source]), y[source])
    else:
        task = h.sum() * 0.0
    adv = F.cross_entropy(domain_head(_ReverseGrad.apply(h, float(lambd))), domain)
    return task + adv
'''
