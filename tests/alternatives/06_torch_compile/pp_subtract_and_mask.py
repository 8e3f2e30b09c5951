"""Uses (logits - mean) > 0 as the mask, square()/division for the scores and a multiply instead of where."""
CELL = "postprocess_fixed"
SOURCE = '''
def postprocess_fixed(logits: torch.Tensor) -> torch.Tensor:
    """Same values as postprocess(logits), traceable by Dynamo as one graph (no print, no .item(), no NumPy)."""
    centred = logits - logits.mean()
    positive = logits.clamp(min=0)
    negative = logits.clamp(max=0)
    scores = positive.square() + negative / 2
    return scores * (centred > 0).to(logits.dtype)
'''
