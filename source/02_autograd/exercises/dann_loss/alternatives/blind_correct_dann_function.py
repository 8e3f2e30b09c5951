"""Correct: a gradient-reversal autograd.Function (lambd on ctx) on the domain branch only; no-source batches get a graph-free zero task loss. (written blind, from the release alone)."""
CELL = 'dann_loss'
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
        task = adv.new_zeros(())
    return task + adv
'''
