"""Mean as sum / L with nan_to_num for the empty set: nan_to_num also clips an overflowing (inf) mean to finfo.max. (written blind, from the release alone)."""
CELL = 'summarise_unbacked'
KIND = 'edge-case'
NOTE = "torch.nan_to_num replaces infinities too, not only NaN: a mean whose sum overflows to inf is clipped to the dtype's largest finite value instead of staying inf."
FAILS = ['test_summarise_values']
SOURCE = '''
def summarise_unbacked(x: torch.Tensor) -> torch.Tensor:
    """summarise(x) with no question about the set size: one compiled graph for every L, 0 and 1 included."""
    mean = torch.nan_to_num(x.sum(dim=0) / x.shape[0])           # 0 / 0 = nan for the empty set -> 0
    top = torch.cat([x, x.new_full((1, x.shape[1]), float("-inf"))]).amax(dim=0)
    top = torch.nan_to_num(top, neginf=0.0)                       # -inf only for the empty set
    return torch.stack([mean, top])
'''
