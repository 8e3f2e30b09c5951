"""Sums every time step, padding included, and divides by the lengths: right only where the padding is zeros."""
KIND = "wrong-value"
NOTE = "Summing over every time step includes the padding rows, which may hold any value; only each sample's first lengths[i] steps may enter its mean."
CELL = "pooled_scores"
FAILS = ["test_pooled_scores_values", "test_pooled_scores_gradients", "test_pooled_scores_batched",
         "test_pooled_scores_edge_cases"]
SOURCE = '''
def pooled_scores(x, lengths, w):
    return (x.sum(dim=1) / lengths[:, None]) @ w
'''
