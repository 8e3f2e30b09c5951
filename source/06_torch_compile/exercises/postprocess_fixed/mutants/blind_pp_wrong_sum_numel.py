"""Threshold as logits.sum() / logits.numel(): in float16 the sum rounds and overflows to inf (mean() does not). (written blind, from the release alone)."""
CELL = 'postprocess_fixed'
KIND = 'edge-case'
NOTE = "In float16, sum() / numel() is not mean(): the sum is rounded to float16, and can overflow to inf, before the division, so the threshold differs from the mean the original uses."
FAILS = ['test_postprocess_values']
SOURCE = '''
def postprocess_fixed(logits: torch.Tensor) -> torch.Tensor:
    """Same values as postprocess(logits), traceable by Dynamo as one graph (no print, .item(), NumPy or loop)."""
    threshold = logits.sum() / logits.numel()           # the mean of all entries, whatever the shape
    keep = logits > threshold
    scores = torch.where(logits > 0, logits * logits, 0.5 * logits)
    out = torch.where(keep, scores, torch.zeros_like(scores))
    if out.numel() == 0:
        return out
    mantissa, exponent = torch.frexp(out.abs().amax())
    halvings = (exponent - (mantissa == 0.5).to(exponent.dtype)).clamp(min=0)
    return out * torch.exp2(-halvings.to(out.dtype))
'''
