"""Uses (logits - mean) > 0 as the mask, clamp/square()/division for the scores and where with a scalar 0; counts
the halvings with a rounded log2, then corrects it with an exact comparison."""
CELL = "postprocess_fixed"
SOURCE = '''
def postprocess_fixed(logits: torch.Tensor) -> torch.Tensor:
    """Same values as postprocess(logits), traceable by Dynamo as one graph (no print, .item(), NumPy or loop)."""
    centred = logits - logits.mean()
    positive = logits.clamp(min=0)
    negative = logits.clamp(max=0)
    scores = positive.square() + negative / 2
    out = torch.where(centred > 0, scores, 0.0)
    if out.shape.numel() == 0:
        return out
    top = out.abs().amax()
    count = torch.ceil(torch.log2(top)).clamp(min=0)           # may be one short just above a power of two
    count = count + (top * torch.exp2(-count) > 1).to(count.dtype)   # exact test, then one more halving
    return out * torch.exp2(-count)
'''
