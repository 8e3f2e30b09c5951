"""Takes the frexp exponent as the count without the mantissa==0.5 correction: a largest magnitude that is a power of two (1 included) is halved once too often. (written blind, from the release alone)."""
CELL = 'postprocess_fixed'
KIND = 'edge-case'
NOTE = 'frexp writes x = m * 2**e with 0.5 <= m < 1, so a power of two has m = 0.5 and e one above its log2: the count must drop by one there, or a largest score of exactly 1 or 4 is halved once too often.'
FAILS = ['test_postprocess_values']
SOURCE = '''
def postprocess_fixed(logits: torch.Tensor) -> torch.Tensor:
    keep = logits > logits.mean()
    scores = torch.where(logits > 0, logits * logits, 0.5 * logits)
    out = torch.where(keep, scores, torch.zeros_like(scores))
    if out.numel() == 0:
        return out
    _, exp = torch.frexp(out.abs().amax())
    k = exp.clamp(min=0)
    return out * torch.exp2(-k.to(out.dtype))
'''
