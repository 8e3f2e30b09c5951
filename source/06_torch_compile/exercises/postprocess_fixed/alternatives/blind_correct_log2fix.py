"""Pads the magnitudes with a 1 (empty and small cases give k=0), k from ceil(log2) in float64 corrected by exact comparisons, ldexp-style scaling. (written blind, from the release alone)."""
CELL = 'postprocess_fixed'
SOURCE = '''
def postprocess_fixed(logits: torch.Tensor) -> torch.Tensor:
    thr = logits.mean()
    scores = torch.where(logits > 0, torch.square(logits), logits * 0.5)
    out = scores.masked_fill(logits <= thr, 0)        # entries equal to the mean are dropped too
    # largest magnitude, at least 1 (so k >= 0, and an empty tensor needs no special case)
    mags = torch.cat([out.detach().abs().reshape(-1).double(), torch.ones(1, dtype=torch.float64, device=out.device)])
    m = mags.max()
    k = torch.ceil(torch.log2(m))
    # log2 may round onto an integer just above a power of two: fix with exact comparisons in float64
    k = torch.where(m > torch.pow(2.0, k), k + 1, k)
    k = torch.where((k > 0) & (m <= torch.pow(2.0, k - 1)), k - 1, k)
    scale = torch.pow(2.0, -k).to(out.dtype)          # 2**-k is exact (possibly subnormal) in every float dtype
    return out * scale
'''
