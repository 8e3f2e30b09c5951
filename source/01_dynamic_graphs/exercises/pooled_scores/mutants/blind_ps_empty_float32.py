"""Special-cases B == 0 with torch.zeros(0): a float64 empty batch comes back as float32 (and on the CPU). (written blind, from the release alone)."""
CELL = 'pooled_scores'
KIND = 'edge-case'
NOTE = "A fresh empty tensor built without x's dtype and device gets torch's defaults (float32, CPU); an empty batch must come back in x's dtype, which the batched ops give by themselves."
FAILS = ['test_pooled_scores_edge_cases']
SOURCE = '''
def pooled_scores(x: torch.Tensor, lengths: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """pooled_scores_loop for the whole batch at once: no loop over samples, nothing read back to Python."""
    if x.shape[0] == 0:                      # nothing to pool
        return torch.zeros(0)
    keep = torch.arange(x.shape[1], device=x.device) < lengths[:, None]
    mean = (x * keep[..., None]).sum(dim=1) / lengths[:, None]
    return mean @ w
'''
