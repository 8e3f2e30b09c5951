"""Uses (logits - mean) > 0 as the mask, clamp/square()/division for the scores and where with a scalar 0.

(It used to multiply the scores by the mask: in float16 a dropped entry whose square overflows gives inf * 0 = nan
where postprocess gives 0, a finite input the statement covers; see blind_pp_wrong_mask_multiply.)"""
CELL = "postprocess_fixed"
SOURCE = '''
def postprocess_fixed(logits: torch.Tensor) -> torch.Tensor:
    """Same values as postprocess(logits), traceable by Dynamo as one graph (no print, no .item(), no NumPy)."""
    centred = logits - logits.mean()
    positive = logits.clamp(min=0)
    negative = logits.clamp(max=0)
    scores = positive.square() + negative / 2
    return torch.where(centred > 0, scores, 0.0)
'''
