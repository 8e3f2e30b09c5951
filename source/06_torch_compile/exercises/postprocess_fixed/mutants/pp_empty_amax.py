"""Takes amax without handling the empty tensor: amax raises on zeros(0, 3)."""
KIND = "edge-case"
NOTE = "A maximum over an empty tensor has no value and raises; the empty input is part of the contract, and its shape is known while tracing, so it can be answered before the reduction."
CELL = "postprocess_fixed"
FAILS = ["test_postprocess_values"]
SOURCE = '''
def postprocess_fixed(logits: torch.Tensor) -> torch.Tensor:
    """Same values as postprocess(logits), traceable by Dynamo as one graph (no print, .item(), NumPy or loop)."""
    keep = logits > logits.mean()
    scores = torch.where(logits > 0, logits * logits, 0.5 * logits)
    out = torch.where(keep, scores, torch.zeros_like(scores))
    mantissa, exponent = torch.frexp(out.abs().amax())
    halvings = (exponent - (mantissa == 0.5).to(exponent.dtype)).clamp(min=0)
    return out * torch.exp2(-halvings.to(out.dtype))
'''
