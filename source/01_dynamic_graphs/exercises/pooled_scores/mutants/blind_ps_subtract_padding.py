"""Sums every time step and subtracts the padding's sum: large finite padding (e.g. 1e8 in float32) cancels catastrophically (inf - inf = NaN near the dtype's max). (written blind, from the release alone)."""
CELL = 'pooled_scores'
KIND = 'edge-case'
NOTE = "Summing every time step and then subtracting the padding's sum lets huge padding values swamp the real ones in floating point (cancellation, even inf - inf); padding must never enter the sum."
FAILS = ['test_pooled_scores_values']
SOURCE = '''
def pooled_scores(x: torch.Tensor, lengths: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """pooled_scores_loop for the whole batch at once: no loop over samples, nothing read back to Python."""
    t = torch.arange(x.shape[1], device=x.device)
    is_pad = (t >= lengths[:, None]).to(x.dtype)                 # (B, T): 1 on padding rows
    total = x.sum(dim=1) - (x * is_pad[..., None]).sum(dim=1)    # everything minus the padding
    return (total / lengths[:, None]) @ w
'''
