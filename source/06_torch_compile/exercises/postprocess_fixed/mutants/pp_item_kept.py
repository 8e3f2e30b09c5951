"""Keeps the .item() threshold (a graph break; fullgraph=True happens to capture it as an unbacked scalar)."""
KIND = "contract"
NOTE = ".item() turns a tensor into a Python number, which breaks the graph of a default compile; comparing a tensor with a 0-d tensor needs no Python number at all."
CELL = "postprocess_fixed"
FAILS = ["test_postprocess_one_graph"]
SOURCE = '''
def postprocess_fixed(logits: torch.Tensor) -> torch.Tensor:
    """Same values as postprocess(logits), traceable by Dynamo as one graph (no print, .item(), NumPy or loop)."""
    mean = logits.mean().item()
    keep = logits > mean
    scores = torch.where(logits > 0, logits * logits, 0.5 * logits)
    out = torch.where(keep, scores, torch.zeros_like(scores))
    if out.numel() == 0:
        return out
    mantissa, exponent = torch.frexp(out.abs().amax())
    halvings = (exponent - (mantissa == 0.5).to(exponent.dtype)).clamp(min=0)
    return out * torch.exp2(-halvings.to(out.dtype))
'''
