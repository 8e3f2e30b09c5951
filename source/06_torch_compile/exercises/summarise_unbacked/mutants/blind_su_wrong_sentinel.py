"""Uses -1e9 as the "never wins" row and maps -1e9 back to 0: wrong for finite inputs <= -1e9. (written blind, from the release alone)."""
CELL = 'summarise_unbacked'
KIND = 'edge-case'
NOTE = "A finite sentinel like -1e9 can be reached by real inputs: a column whose values all lie at or below it gets 0 as its maximum. The padding must be a value no finite input can lose to."
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
