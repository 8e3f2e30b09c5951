"""Turns `>` into `>=`: entries equal to the mean are kept instead of zeroed."""
KIND = "wrong-value"
NOTE = "Entries equal to the mean are dropped, as in the original: the comparison is strict, and >= keeps them."
CELL = "postprocess_fixed"
FAILS = ["test_postprocess_values", "test_postprocess_one_graph", "test_postprocess_fullgraph"]
SOURCE = '''
def postprocess_fixed(logits: torch.Tensor) -> torch.Tensor:
    """Same values as postprocess(logits), traceable by Dynamo as one graph (no print, no .item(), no NumPy)."""
    keep = logits >= logits.mean()
    scores = torch.where(logits > 0, logits * logits, 0.5 * logits)
    return torch.where(keep, scores, torch.zeros_like(scores))
'''
