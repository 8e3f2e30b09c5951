"""Overfits the 2-D example: takes the mean and the max over dims (0, 1), which raises on 0-d, 1-D (and gives per-slice results on 3-D) tensors. (written blind, from the release alone)."""
CELL = 'postprocess_fixed'
KIND = 'overfit'
NOTE = 'The example is 2-D, the contract is any shape: a mean over dims (0, 1) fails on 0-d and 1-D tensors and thresholds a 3-D one per slice. The mean of all entries is a reduction over every dim.'
FAILS = ['test_postprocess_values']
SOURCE = '''
def postprocess_fixed(logits: torch.Tensor) -> torch.Tensor:
    keep = logits > logits.mean(dim=(0, 1))                # mean of all entries of the (rows, cols) batch
    scores = torch.where(logits > 0, logits * logits, 0.5 * logits)
    out = torch.where(keep, scores, torch.zeros_like(scores))
    if out.numel() == 0:
        return out
    mant, exp = torch.frexp(out.abs().amax(dim=(0, 1)))
    k = torch.where(mant == 0.5, exp - 1, exp).clamp(min=0)
    return out * torch.exp2(-k.to(out.dtype))
'''
