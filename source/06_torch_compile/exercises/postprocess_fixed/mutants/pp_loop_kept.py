"""Keeps the halving loop with .item() in its condition: right values, but a graph break."""
KIND = "contract"
NOTE = "A Python loop whose condition reads tensor values needs a concrete answer at every turn: Dynamo breaks the graph there. Counting the turns in closed form removes the question."
CELL = "postprocess_fixed"
FAILS = ["test_postprocess_one_graph", "test_postprocess_fullgraph"]
SOURCE = '''
def postprocess_fixed(logits: torch.Tensor) -> torch.Tensor:
    """Same values as postprocess(logits), traceable by Dynamo as one graph (no print, .item(), NumPy or loop)."""
    keep = logits > logits.mean()
    scores = torch.where(logits > 0, logits * logits, 0.5 * logits)
    out = torch.where(keep, scores, torch.zeros_like(scores))
    while out.numel() > 0 and out.abs().max().item() > 1.0:
        out = out / 2
    return out
'''
