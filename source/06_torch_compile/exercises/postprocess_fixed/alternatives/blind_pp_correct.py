"""Correct: the course's traceable legacy_score_torch, masked_fill of the entries not above the global mean. (written blind, from the release alone)."""
CELL = 'postprocess_fixed'
SOURCE = '''
def postprocess_fixed(logits: torch.Tensor) -> torch.Tensor:
    """Same values as postprocess(logits), traceable by Dynamo as one graph (no print, .item(), NumPy or loop)."""
    drop = ~(logits > logits.mean())            # 0-d tensor threshold: no .item(); NaN mean drops everything
    out = cd.legacy_score_torch(logits).masked_fill(drop, 0)
    if out.numel() == 0:
        return out
    mantissa, exponent = torch.frexp(out.abs().amax())
    halvings = (exponent - (mantissa == 0.5).to(exponent.dtype)).clamp(min=0)
    return out * torch.exp2(-halvings.to(out.dtype))
'''
