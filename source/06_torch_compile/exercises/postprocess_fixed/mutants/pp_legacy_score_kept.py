"""Removes print and .item() but still calls the untraceable legacy_score."""
KIND = "contract"
NOTE = "legacy_score runs NumPy's np.vectorize, which Dynamo cannot trace: it breaks the graph wherever it is called. Its per-element rule can be written as a selection between tensors."
CELL = "postprocess_fixed"
FAILS = ["test_postprocess_one_graph", "test_postprocess_fullgraph"]
SOURCE = '''
def postprocess_fixed(logits: torch.Tensor) -> torch.Tensor:
    """Same values as postprocess(logits), traceable by Dynamo as one graph (no print, .item(), NumPy or loop)."""
    keep = logits > logits.mean()
    scores = legacy_score(logits)
    out = torch.where(keep, scores, torch.zeros_like(scores))
    if out.numel() == 0:
        return out
    mantissa, exponent = torch.frexp(out.abs().amax())
    halvings = (exponent - (mantissa == 0.5).to(exponent.dtype)).clamp(min=0)
    return out * torch.exp2(-halvings.to(out.dtype))
'''
