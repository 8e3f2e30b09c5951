"""Returns the plain domain loss early when there is no source sample, before the reversal: the encoder gets +grad(adv) instead of -lambd * grad(adv). (written blind, from the release alone)."""
CELL = 'dann_loss'
KIND = 'edge-case'
NOTE = 'Without source samples the domain loss still trains the encoder adversarially: its gradient must be reversed in every batch, not only when a task loss exists.'
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
    if not src.any():                      # nothing to adapt against: only the domain loss
        return F.cross_entropy(domain_head(h), domain)
    adv = F.cross_entropy(domain_head(_Reverse.apply(h, lambd)), domain)
    if src.any():
        task = F.cross_entropy(task_head(h[src]), y[src])
    else:
        task = adv.new_zeros(())
    return task + adv
'''
