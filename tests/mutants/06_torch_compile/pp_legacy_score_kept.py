"""Removes print and .item() but still calls the untraceable legacy_score."""
KIND = "contract"
NOTE = "legacy_score runs NumPy's np.vectorize, which Dynamo cannot trace: it breaks the graph wherever it is called. Its per-element rule can be written as a selection between tensors."
CELL = "postprocess_fixed"
FAILS = ["test_postprocess_one_graph", "test_postprocess_fullgraph"]
SOURCE = '''
def postprocess_fixed(logits: torch.Tensor) -> torch.Tensor:
    """Same values as postprocess(logits), traceable by Dynamo as one graph (no print, no .item(), no NumPy)."""
    keep = logits > logits.mean()
    scores = legacy_score(logits)
    return torch.where(keep, scores, torch.zeros_like(scores))
'''
