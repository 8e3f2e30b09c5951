"""A gradient-reversal Function that keeps lambd on the class: two calls in one graph both use the last lambd."""
CELL = "dann_loss"
KIND = "state"
NOTE = "A lambd stored on the Function class is shared by every call: with two calls in one graph, backward reverses both by the last lambd. Per-call values belong on ctx."
FAILS = ['test_dann_per_call']
SOURCE = '''
class _Reverse(torch.autograd.Function):
    @staticmethod
    def forward(ctx, h, lambd):
        _Reverse.lambd = lambd
        return h.view_as(h)

    @staticmethod
    def backward(ctx, grad_output):
        return -_Reverse.lambd * grad_output, None

def dann_loss(encoder, task_head, domain_head, x, y, domain, lambd=1.0):
    """Return task + adv (0-dim); in backward the domain branch's gradient reaches the encoder times -lambd."""
    h = encoder(x)
    source = domain == 0
    if bool(source.any()):
        task = F.cross_entropy(task_head(h[source]), y[source])
    else:
        task = h.sum() * 0.0
    adv = F.cross_entropy(domain_head(_Reverse.apply(h, lambd)), domain)
    return task + adv
'''
