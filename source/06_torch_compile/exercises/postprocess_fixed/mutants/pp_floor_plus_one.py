"""Counts the halvings as floor(log2(max)) + 1: a largest score that is exactly a power of two is halved once too often."""
KIND = "wrong-value"
NOTE = "The loop stops as soon as every magnitude is at most 1: a largest magnitude that is exactly a power of two needs one halving fewer than floor(log2) + 1, and 1 itself needs none."
CELL = "postprocess_fixed"
FAILS = ["test_postprocess_values"]
SOURCE = '''
def postprocess_fixed(logits: torch.Tensor) -> torch.Tensor:
    """Same values as postprocess(logits), traceable by Dynamo as one graph (no print, .item(), NumPy or loop)."""
    keep = logits > logits.mean()
    scores = torch.where(logits > 0, logits * logits, 0.5 * logits)
    out = torch.where(keep, scores, torch.zeros_like(scores))
    if out.numel() == 0:
        return out
    halvings = (torch.floor(torch.log2(out.abs().amax())) + 1).clamp(min=0)
    return out * torch.exp2(-halvings)
'''
