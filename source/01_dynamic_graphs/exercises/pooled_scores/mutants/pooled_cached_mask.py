"""Caches the mask per (B, T) shape "to save work": a later batch of the same shape with other lengths reuses the wrong mask."""
KIND = "state"
NOTE = "A mask cached across calls by batch shape belongs to the lengths of an earlier batch; each call must build its mask from its own lengths and keep nothing for the next call."
CELL = "pooled_scores"
FAILS = ["test_pooled_scores_edge_cases", "test_pooled_scores_gradients", "test_pooled_scores_values"]
SOURCE = '''
_masks = {}

def pooled_scores(x, lengths, w):
    key = tuple(x.shape[:2])
    if key not in _masks:
        _masks[key] = torch.arange(x.shape[1], device=x.device) < lengths[:, None]
    keep = _masks[key]
    return ((x * keep[..., None]).sum(dim=1) / lengths[:, None]) @ w
'''
