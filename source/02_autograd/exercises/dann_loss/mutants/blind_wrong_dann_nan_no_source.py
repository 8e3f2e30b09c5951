"""Takes cross_entropy over the (possibly empty) source selection unconditionally: a batch without source samples gives NaN and NaN gradients. (written blind, from the release alone)."""
CELL = 'dann_loss'
KIND = 'edge-case'
NOTE = 'The mean over an empty selection is 0/0 = NaN: a batch without source samples needs its own branch, with no task loss at all.'
FAILS = ['test_dann_heads', 'test_dann_value']
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
    task = F.cross_entropy(task_head(h[src]), y[src])
    return task + adv
'''
