"""Zeroes the dropped entries of logits in place (masked_fill_) before scoring: right values, but the input is modified. (written blind, from the release alone)."""
CELL = 'postprocess_fixed'
KIND = 'mutation'
NOTE = "The input must not be modified: an in-place op such as masked_fill_ on logits changes the caller's tensor. The result has to be built in new tensors."
FAILS = ['test_postprocess_values']
SOURCE = '''
def postprocess_fixed(logits: torch.Tensor) -> torch.Tensor:
    """Same values as postprocess(logits), traceable by Dynamo as one graph (no print, .item(), NumPy or loop)."""
    logits.masked_fill_(logits <= logits.mean(), 0.0)    # dropped entries become 0, and legacy_score(0) == 0
    out = torch.where(logits > 0, logits * logits, 0.5 * logits)
    if out.numel() == 0:
        return out
    mantissa, exponent = torch.frexp(out.abs().amax())
    halvings = (exponent - (mantissa == 0.5).to(exponent.dtype)).clamp(min=0)
    return out * torch.exp2(-halvings.to(out.dtype))
'''
