"""Finds the padding by its value (x == 100, as in the visible tests) instead of from lengths: any other padding, or a real 100, breaks it. (written blind, from the release alone)."""
CELL = 'pooled_scores'
KIND = 'overfit'
NOTE = "The padding is defined by lengths, not by its value: padded rows may hold any finite number, and a real time step may hold the value you look for."
FAILS = ['test_pooled_scores_batched', 'test_pooled_scores_edge_cases', 'test_pooled_scores_gradients', 'test_pooled_scores_values']
SOURCE = '''
def pooled_scores(x: torch.Tensor, lengths: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """pooled_scores_loop for the whole batch at once: no loop over samples, nothing read back to Python."""
    PAD = 100.0
    real = torch.where(x == PAD, torch.zeros_like(x), x)          # padding rows -> 0
    return (real.sum(dim=1) / lengths[:, None]) @ w
'''
