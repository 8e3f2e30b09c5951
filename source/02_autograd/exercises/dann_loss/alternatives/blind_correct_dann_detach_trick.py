"""Correct: reversal by the detach identity h_rev = (1+lambd)*h.detach() - lambd*h, source rows by index_select, early return of adv when there is no source sample. (written blind, from the release alone)."""
CELL = 'dann_loss'
SOURCE = '''
import torch
import torch.nn.functional as F


def dann_loss(encoder, task_head, domain_head, x, y, domain, lambd=1.0):
    """Return task + adv (0-dim); in backward the domain branch's gradient reaches the encoder times -lambd."""
    h = encoder(x)
    # forward value: -lambd*h + (1+lambd)*h = h ; backward: only the first term carries a gradient, -lambd
    h_rev = h.detach() * (1.0 + lambd) - lambd * h
    adv = F.cross_entropy(domain_head(h_rev), domain)
    idx = torch.nonzero(domain == 0).flatten()
    if idx.numel() == 0:
        return adv
    return F.cross_entropy(task_head(h.index_select(0, idx)), y.index_select(0, idx)) + adv
'''
