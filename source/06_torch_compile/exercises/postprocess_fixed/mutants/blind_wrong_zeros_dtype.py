"""Builds the zeros with torch.zeros(shape) (default float32): torch.where promotes, so float16 inputs come back as float32. (written blind, from the release alone)."""
CELL = 'postprocess_fixed'
KIND = 'contract'
NOTE = 'torch.zeros(shape) is float32 whatever the input is; where() then promotes float16 to float32. Build fills from the input (zeros_like, or a 0-d tensor of its dtype) to keep its dtype.'
FAILS = ['test_postprocess_values']
SOURCE = '''
def postprocess_fixed(logits: torch.Tensor) -> torch.Tensor:
    keep = logits > logits.mean()
    scores = torch.where(logits > 0, logits * logits, 0.5 * logits)
    out = torch.where(keep, scores, torch.zeros(logits.shape))
    if out.numel() == 0:
        return out
    mant, exp = torch.frexp(out.abs().amax())
    k = torch.where(mant == 0.5, exp - 1, exp).clamp(min=0)
    return out * torch.exp2(-k.to(out.dtype))
'''
