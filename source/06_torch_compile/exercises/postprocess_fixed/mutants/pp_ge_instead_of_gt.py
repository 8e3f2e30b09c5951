"""Turns `>` into `>=`: entries equal to the mean are kept instead of zeroed."""
KIND = "wrong-value"
NOTE = "Entries equal to the mean are dropped, as in the original: the comparison is strict, and >= keeps them."
CELL = "postprocess_fixed"
FAILS = ["test_postprocess_values", "test_postprocess_one_graph", "test_postprocess_fullgraph"]
SOURCE = '''
def postprocess_fixed(logits: torch.Tensor) -> torch.Tensor:
    """Same values as postprocess(logits), traceable by Dynamo as one graph (no print, .item(), NumPy or loop)."""
    keep = logits >= logits.mean()
    scores = torch.where(logits > 0, logits * logits, 0.5 * logits)
    out = torch.where(keep, scores, torch.zeros_like(scores))
    if out.numel() == 0:
        return out
    mantissa, exponent = torch.frexp(out.abs().amax())
    halvings = (exponent - (mantissa == 0.5).to(exponent.dtype)).clamp(min=0)
    return out * torch.exp2(-halvings.to(out.dtype))
'''
