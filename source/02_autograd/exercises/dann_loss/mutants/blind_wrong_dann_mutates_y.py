"""Overwrites the target samples' placeholder labels in y in place (y[~src] = -100) and relies on ignore_index: the caller's y changes. (written blind, from the release alone)."""
CELL = 'dann_loss'
KIND = 'mutation'
NOTE = "The caller's labels are input data: writing placeholders into y in place changes their batch for every later use."
FAILS = ['test_dann_per_call']
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
        y[~src] = -100                       # placeholders must not reach cross_entropy as labels
        task = F.cross_entropy(task_head(h), y, ignore_index=-100)
    else:
        task = adv.new_zeros(())
    return task + adv
'''
