"""Uses -1e9 as the "never wins" row and maps -1e9 back to 0: wrong for finite inputs <= -1e9. (written blind, from the release alone)."""
CELL = 'summarise_unbacked'
KIND = 'edge-case'
FAILS = ['test_summarise_values']
SOURCE = '''
def summarise_unbacked(x: torch.Tensor) -> torch.Tensor:
    """summarise(x) with no question about the set size: one compiled graph for every L, 0 and 1 included."""
    NEG = -1e9                                                    # smaller than any feature value
    mean = x.sum(dim=0) / max(x.shape[0], 1)
    top = torch.cat([x, x.new_full((1, x.shape[1]), NEG)]).amax(dim=0)
    top = torch.where(top == NEG, torch.zeros_like(top), top)
    return torch.stack([mean, top])
'''
