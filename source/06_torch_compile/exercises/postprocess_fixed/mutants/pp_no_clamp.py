"""Uses the frexp count without clamping at 0: scores that already fit are scaled up."""
KIND = "edge-case"
NOTE = "The loop only ever halves: when every magnitude is already at most 1 it does not run, so the count is never negative; an unclamped exponent scales small scores up."
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
    mantissa, exponent = torch.frexp(out.abs().amax())
    halvings = exponent - (mantissa == 0.5).to(exponent.dtype)
    return out * torch.exp2(-halvings.to(out.dtype))
'''
