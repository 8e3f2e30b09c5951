"""Zeroes the padding in x itself (x.mul_): changes the caller's batch, and raises on a leaf that requires grad."""
KIND = "mutation"
NOTE = "Zeroing the padding in x itself changes the caller's batch, and an in-place change of a leaf that requires grad is refused; the masked values must go into a new tensor."
CELL = "pooled_scores"
FAILS = ["test_pooled_scores_gradients", "test_pooled_scores_edge_cases"]
SOURCE = '''
def pooled_scores(x, lengths, w):
    keep = torch.arange(x.shape[1], device=x.device) < lengths[:, None]
    x.mul_(keep[..., None])
    return (x.sum(dim=1) / lengths[:, None]) @ w
'''
