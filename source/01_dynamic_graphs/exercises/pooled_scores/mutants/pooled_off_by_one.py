"""Keeps time steps t <= lengths[i]: one padding row too many in every sample shorter than T."""
KIND = "edge-case"
NOTE = "Sample i's real time steps are indices 0 to lengths[i] - 1: keeping the index equal to lengths[i] adds one padding row to every sample shorter than T."
CELL = "pooled_scores"
FAILS = ["test_pooled_scores_values", "test_pooled_scores_gradients", "test_pooled_scores_batched",
         "test_pooled_scores_edge_cases"]
SOURCE = '''
def pooled_scores(x, lengths, w):
    keep = torch.arange(x.shape[1], device=x.device) <= lengths[:, None]
    return ((x * keep[..., None]).sum(dim=1) / lengths[:, None]) @ w
'''
