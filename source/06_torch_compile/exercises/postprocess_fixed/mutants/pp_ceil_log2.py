"""Counts the halvings as ceil(log2(max)): one ulp above 2**j, the rounded log2 is exactly j, one halving short."""
KIND = "edge-case"
NOTE = "A logarithm rounded to the nearest float is not exact: just above a power of two, log2 rounds down onto the integer and ceil gives one halving too few. The exponent of the float itself is exact."
CELL = "postprocess_fixed"
FAILS = ["test_postprocess_values"]
SOURCE = '''
def postprocess_fixed(logits: torch.Tensor) -> torch.Tensor:
    """Same values as postprocess(logits), traceable by Dynamo as one graph (no print, .item(), NumPy or loop)."""
    keep = logits > logits.mean()
    scores = torch.where(logits > 0, logits * logits, 0.5 * logits)
    out = torch.where(keep, scores, torch.zeros_like(scores))
    if out.numel() == 0:
        return out
    halvings = torch.ceil(torch.log2(out.abs().amax())).clamp(min=0)
    return out * torch.exp2(-halvings)
'''
