"""Logs before any op: explain reports one graph and no break, but the graph_breaks log (and fullgraph) see it."""
KIND = "contract"
NOTE = "A print in the compiled function is a graph break even before the first op (explain may not count it, but fullgraph=True fails): logging belongs outside the function you compile."
CELL = "postprocess_fixed"
FAILS = ["test_postprocess_one_graph", "test_postprocess_fullgraph"]
SOURCE = '''
def postprocess_fixed(logits: torch.Tensor) -> torch.Tensor:
    """Same values as postprocess(logits), traceable by Dynamo as one graph (no print, .item(), NumPy or loop)."""
    print("postprocess_fixed: scoring", tuple(logits.shape))
    keep = logits > logits.mean()
    scores = torch.where(logits > 0, logits * logits, 0.5 * logits)
    out = torch.where(keep, scores, torch.zeros_like(scores))
    if out.numel() == 0:
        return out
    mantissa, exponent = torch.frexp(out.abs().amax())
    halvings = (exponent - (mantissa == 0.5).to(exponent.dtype)).clamp(min=0)
    return out * torch.exp2(-halvings.to(out.dtype))
'''
