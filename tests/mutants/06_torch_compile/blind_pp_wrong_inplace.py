"""Zeroes the dropped entries of logits in place (masked_fill_) before scoring: right values, but the input is modified. (written blind, from the release alone)."""
CELL = 'postprocess_fixed'
KIND = 'mutation'
FAILS = ['test_postprocess_values']
SOURCE = '''
def postprocess_fixed(logits: torch.Tensor) -> torch.Tensor:
    """Same values as postprocess(logits), traceable by Dynamo as one graph (no print, no .item(), no NumPy)."""
    logits.masked_fill_(logits <= logits.mean(), 0.0)    # dropped entries become 0, and legacy_score(0) == 0
    return torch.where(logits > 0, logits * logits, 0.5 * logits)
'''
