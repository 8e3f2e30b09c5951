"""Still a Python loop over the samples (lengths read with .tolist()): right values and gradients, B times the ops."""
KIND = "contract"
NOTE = "A Python loop over the samples runs a few ops per sample and reads the lengths back to Python; the batched version must run the same ops whatever the batch size, on the device."
CELL = "pooled_scores"
FAILS = ["test_pooled_scores_batched"]
SOURCE = '''
def pooled_scores(x, lengths, w):
    if x.shape[0] == 0:
        return x.new_zeros(0)
    return torch.stack([x[i, :n].mean(dim=0) @ w for i, n in enumerate(lengths.tolist())])
'''
