"""Divides by the largest magnitude when it exceeds 1, instead of by the loop's power of two."""
KIND = "wrong-value"
NOTE = "Halving until the scores fit is not normalising by the maximum: the loop divides by a power of two, so the largest magnitude ends between one half and 1, not at exactly 1."
CELL = "postprocess_fixed"
FAILS = ["test_postprocess_values", "test_postprocess_one_graph", "test_postprocess_fullgraph"]
SOURCE = '''
def postprocess_fixed(logits: torch.Tensor) -> torch.Tensor:
    """Same values as postprocess(logits), traceable by Dynamo as one graph (no print, .item(), NumPy or loop)."""
    keep = logits > logits.mean()
    scores = torch.where(logits > 0, logits * logits, 0.5 * logits)
    out = torch.where(keep, scores, torch.zeros_like(scores))
    top = out.abs().amax() if out.numel() > 0 else out.new_ones(())
    return out / torch.clamp(top, min=1.0)
'''
