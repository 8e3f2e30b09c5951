"""Pools a detached copy of x ("no gradient needed through the mask"): right scores, but x gets no gradient."""
KIND = "graph"
NOTE = "Pooling a detached copy of x cuts x out of the graph: the scores are right, but x gets no gradient. Masking the padding does not require leaving autograd."
CELL = "pooled_scores"
FAILS = ["test_pooled_scores_gradients"]
SOURCE = '''
def pooled_scores(x, lengths, w):
    keep = torch.arange(x.shape[1], device=x.device) < lengths[:, None]
    pooled = (x.detach() * keep[..., None]).sum(dim=1) / lengths[:, None]
    return pooled @ w
'''
