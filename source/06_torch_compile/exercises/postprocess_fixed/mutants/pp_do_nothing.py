"""Returns the logits unchanged: one graph, no break, and the wrong values."""
KIND = "do-nothing"
NOTE = "The answer does not do the work the statement asks for yet: it returns a placeholder (the logits unchanged) instead of the scored values."
CELL = "postprocess_fixed"
FAILS = ["test_postprocess_values", "test_postprocess_one_graph", "test_postprocess_fullgraph"]
SOURCE = '''
def postprocess_fixed(logits: torch.Tensor) -> torch.Tensor:
    """Same values as postprocess(logits), traceable by Dynamo as one graph (no print, .item(), NumPy or loop)."""
    return logits
'''
