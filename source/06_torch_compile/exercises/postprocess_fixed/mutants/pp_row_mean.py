"""Thresholds each row at its own mean (mean(dim=-1, keepdim=True)) instead of the mean of all entries."""
KIND = "wrong-value"
NOTE = "The threshold is one number, the mean of all entries whatever the shape: a mean per row compares each row with a threshold of its own."
CELL = "postprocess_fixed"
FAILS = ["test_postprocess_values", "test_postprocess_one_graph", "test_postprocess_fullgraph"]
SOURCE = '''
def postprocess_fixed(logits: torch.Tensor) -> torch.Tensor:
    """Same values as postprocess(logits), traceable by Dynamo as one graph (no print, .item(), NumPy or loop)."""
    keep = logits > logits.mean(dim=-1, keepdim=True)
    scores = torch.where(logits > 0, logits * logits, 0.5 * logits)
    out = torch.where(keep, scores, torch.zeros_like(scores))
    if out.numel() == 0:
        return out
    mantissa, exponent = torch.frexp(out.abs().amax())
    halvings = (exponent - (mantissa == 0.5).to(exponent.dtype)).clamp(min=0)
    return out * torch.exp2(-halvings.to(out.dtype))
'''
