"""Skips the reversal layer when lambd is 0, so the domain loss's gradient then reaches the encoder unreversed instead of not at all. (written blind, from the release alone)."""
CELL = 'dann_loss'
KIND = 'wrong-value'
NOTE = 'lambd = 0 means the reversed branch sends nothing back, not that the domain loss flows unreversed: skipping the reversal layer turns 0 into +1.'
FAILS = ['test_dann_encoder']
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
    d_in = _Reverse.apply(h, lambd) if lambd else h        # no reversal needed at lambd = 0
    adv = F.cross_entropy(domain_head(d_in), domain)
    if src.any():
        task = F.cross_entropy(task_head(h[src]), y[src])
    else:
        task = adv.new_zeros(())
    return task + adv
'''
