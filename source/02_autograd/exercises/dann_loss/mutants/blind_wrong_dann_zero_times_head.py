"""Without source samples uses task = 0 * task_head(h).sum(): the value is 0 but the task head's .grad become zeros instead of staying None. (written blind, from the release alone)."""
CELL = 'dann_loss'
KIND = 'edge-case'
NOTE = '0 * task_head(h).sum() is zero in value but not in the graph: backward still writes zero gradients into the task head, where None was expected.'
FAILS = ['test_dann_heads']
SOURCE = '''
import torch
import torch.nn.functional as F


class _Reverse(torch.autograd.Function):
    @staticmethod
    def forward(ctx, h, lambd):
        ctx.lambd = lambd
        return h.view_as(h)

    @staticmethod
    def backward(ctx, grad):
        return -ctx.lambd * grad, None


def dann_loss(encoder, task_head, domain_head, x, y, domain, lambd=1.0):
    """Return task + adv (0-dim); in backward the domain branch's gradient reaches the encoder times -lambd."""
    h = encoder(x)
    src = domain == 0
    adv = F.cross_entropy(domain_head(_Reverse.apply(h, lambd)), domain)
    if src.any():
        task = F.cross_entropy(task_head(h[src]), y[src])
    else:
        task = 0.0 * task_head(h).sum()     # keeps the dtype and the device
    return task + adv
'''
