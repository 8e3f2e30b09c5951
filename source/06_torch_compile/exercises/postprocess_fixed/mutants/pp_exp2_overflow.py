"""Divides by exp2(k) in the input's dtype: in float16, 2**16 is inf and the scores become 0."""
KIND = "edge-case"
NOTE = "Dividing by 2**k needs 2**k in the input's dtype, and float16 tops out below 2**16: it becomes inf and the scores 0. Multiplying by 2**-k stays representable."
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
    mantissa, exponent = torch.frexp(out.abs().amax())
    halvings = (exponent - (mantissa == 0.5).to(exponent.dtype)).clamp(min=0)
    return out / torch.exp2(halvings.to(out.dtype))
'''
