"""Keeps the print of the mean inside the function."""
KIND = "contract"
CELL = "postprocess_fixed"
FAILS = ["test_postprocess_one_graph", "test_postprocess_fullgraph"]
SOURCE = '''
def postprocess_fixed(logits: torch.Tensor) -> torch.Tensor:
    """Same values as postprocess(logits), traceable by Dynamo as one graph (no print, no .item(), no NumPy)."""
    mean = logits.mean()
    print("postprocess: mean logit", mean)
    keep = logits > mean
    scores = torch.where(logits > 0, logits * logits, 0.5 * logits)
    return torch.where(keep, scores, torch.zeros_like(scores))
'''
