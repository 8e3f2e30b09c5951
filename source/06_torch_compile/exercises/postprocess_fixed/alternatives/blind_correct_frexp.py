"""Mask from one comparison with the overall 0-d mean, torch.where scores, halving count from torch.frexp of the largest magnitude. (written blind, from the release alone)."""
CELL = 'postprocess_fixed'
SOURCE = '''
def postprocess_fixed(logits: torch.Tensor) -> torch.Tensor:
    """Same values as postprocess(logits), traceable by Dynamo as one graph (no print, .item(), NumPy or loop)."""
    keep = logits > logits.mean()                                   # 0-d tensor threshold, strict >
    scores = torch.where(logits > 0, logits * logits, 0.5 * logits)  # legacy_score in torch
    out = torch.where(keep, scores, torch.zeros_like(scores))
    if out.numel() == 0:                                            # static while tracing
        return out
    mant, exp = torch.frexp(out.abs().amax())                       # m = mant * 2**exp, mant in [0.5, 1)
    k = torch.where(mant == 0.5, exp - 1, exp).clamp(min=0)         # smallest k >= 0 with m / 2**k <= 1
    return out * torch.exp2(-k.to(out.dtype))                       # 2**-k fits every float dtype
'''
