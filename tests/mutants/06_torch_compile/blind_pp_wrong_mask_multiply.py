"""Multiplies the scores by the boolean mask: inf * 0 = nan and nan * 0 = nan where postprocess gives 0. (written blind, from the release alone)."""
CELL = 'postprocess_fixed'
KIND = 'edge-case'
NOTE = "Multiplying by a boolean mask is not a selection: a score that overflowed to inf (a float16 square) times 0 is NaN, where a dropped entry must be 0."
FAILS = ['test_postprocess_values']
SOURCE = '''
def postprocess_fixed(logits: torch.Tensor) -> torch.Tensor:
    """Same values as postprocess(logits), traceable by Dynamo as one graph (no print, no .item(), no NumPy)."""
    scores = torch.where(logits > 0, logits * logits, 0.5 * logits)
    return scores * (logits > logits.mean())            # the mask zeroes what is not kept
'''
