"""Trims the batch to the longest sample first (int(lengths.max())): one host sync per call, and an empty batch raises."""
KIND = "contract"
NOTE = "Reading the longest length back as a Python number syncs with the device on every call, and fails on an empty batch; a mask over all T time steps needs no value read back."
CELL = "pooled_scores"
FAILS = ["test_pooled_scores_batched", "test_pooled_scores_edge_cases"]
SOURCE = '''
def pooled_scores(x, lengths, w):
    longest = int(lengths.max())
    x = x[:, :longest]
    keep = torch.arange(longest, device=x.device) < lengths[:, None]
    return ((x * keep[..., None]).sum(dim=1) / lengths[:, None]) @ w
'''
