"""Correct: prefix sums over time, gather the sum at index lengths-1 (padding never enters), divide by lengths. (written blind, from the release alone)."""
CELL = 'pooled_scores'
SOURCE = '''
def pooled_scores(x: torch.Tensor, lengths: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """pooled_scores_loop for the whole batch at once: no loop over samples, nothing read back to Python."""
    B, T, D = x.shape
    prefix = x.cumsum(dim=1)                                      # (B, T, D): sum of the first t+1 steps
    idx = (lengths - 1).view(B, 1, 1).expand(B, 1, D)
    total = prefix.gather(1, idx).squeeze(1)                      # (B, D): sum of the first lengths[i] steps
    return (total / lengths.view(B, 1).to(x.dtype)) @ w
'''
