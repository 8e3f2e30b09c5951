"""Sentinel torch.finfo(torch.float32).min for every dtype: float64 inputs below -3.4e38 (finite) give a wrong max. (written blind, from the release alone)."""
CELL = 'summarise_unbacked'
KIND = 'edge-case'
NOTE = "The lowest finite float32 is not the lowest float64: finite float64 inputs can lie far below it, and a column whose values all do gets 0 as its maximum."
FAILS = ['test_summarise_values']
SOURCE = '''
def summarise_unbacked(x: torch.Tensor) -> torch.Tensor:
    """summarise(x) with no question about the set size: one compiled graph for every L, 0 and 1 included."""
    low = torch.finfo(torch.float32).min                          # the lowest finite float
    mean = x.sum(dim=0) / max(x.shape[0], 1)
    top = torch.cat([x, x.new_full((1, x.shape[1]), low)]).amax(dim=0)
    top = torch.where(top == low, torch.zeros_like(top), top)
    return torch.stack([mean, top])
'''
