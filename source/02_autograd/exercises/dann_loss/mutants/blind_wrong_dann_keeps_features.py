"""Stores this step's features on the encoder (encoder.last_features = h) for logging: a module keeps the graph of every call alive until the next. (written blind, from the release alone)."""
CELL = 'dann_loss'
KIND = 'state'
NOTE = "An attribute on a module outlives the call: it keeps this step's features and their whole graph alive until the next step replaces them."
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
    encoder.last_features = h              # handy for plotting the feature alignment
    src = domain == 0
    adv = F.cross_entropy(domain_head(_Reverse.apply(h, lambd)), domain)
    if src.any():
        task = F.cross_entropy(task_head(h[src]), y[src])
    else:
        task = adv.new_zeros(())
    return task + adv
'''
