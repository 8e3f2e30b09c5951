"""Counts halvings as ceil(log2(max|score|)) in the input dtype: just above a power of two the log rounds down onto the integer, one halving too few. (written blind, from the release alone)."""
CELL = 'postprocess_fixed'
KIND = 'wrong-value'
NOTE = 'log2 in a low precision rounds: just above a power of two it lands on the integer, and ceil gives one halving too few. Count exactly (compare with powers of two) or correct the rounded count.'
FAILS = ['test_postprocess_values']
SOURCE = '''
def postprocess_fixed(logits: torch.Tensor) -> torch.Tensor:
    keep = logits > logits.mean()
    scores = torch.where(logits > 0, logits * logits, 0.5 * logits)
    out = torch.where(keep, scores, torch.zeros_like(scores))
    if out.numel() == 0:
        return out
    k = torch.ceil(torch.log2(out.abs().amax())).clamp(min=0)
    return out / torch.exp2(k)
'''
