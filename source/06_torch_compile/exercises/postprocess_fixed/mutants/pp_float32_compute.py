"""Computes in float32 and casts back: for float16 logits the float32 mean is not postprocess's (float16) threshold,
and float64 logits near 1e20 overflow float32 when squared (the compiled probes' hidden inputs)."""
KIND = "edge-case"
NOTE = "Computing in float32 and casting back does not give the original values: the mean threshold and the squares must be computed in the input's own dtype (float16 rounds differently, float64 exceeds float32's range)."
CELL = "postprocess_fixed"
FAILS = ["test_postprocess_values", "test_postprocess_one_graph", "test_postprocess_fullgraph"]
SOURCE = '''
def postprocess_fixed(logits: torch.Tensor) -> torch.Tensor:
    """Same values as postprocess(logits), traceable by Dynamo as one graph (no print, .item(), NumPy or loop)."""
    x = logits.float()
    keep = x > x.mean()
    scores = torch.where(x > 0, x * x, 0.5 * x)
    out = torch.where(keep, scores, torch.zeros_like(scores)).to(logits.dtype)
    if out.numel() == 0:
        return out
    mantissa, exponent = torch.frexp(out.abs().amax())
    halvings = (exponent - (mantissa == 0.5).to(exponent.dtype)).clamp(min=0)
    return out * torch.exp2(-halvings.to(out.dtype))
'''
