"""Pads the max with the sentinel -1e9 and maps it back to 0: wrong for sets whose values lie below -1e9."""
KIND = "overfit"
NOTE = "A finite sentinel like -1e9 can be reached by real inputs: a column whose values all lie at or below it gets 0 as its maximum. The padding must be a value no finite input can lose to."
CELL = "summarise_unbacked"
FAILS = ["test_summarise_values"]
SOURCE = '''
def summarise_unbacked(x: torch.Tensor) -> torch.Tensor:
    """summarise(x) with no question about the set size: one compiled graph for every L, 0 and 1 included."""
    pad = x.new_full((1, x.shape[1]), -1e9)
    top = torch.cat([x, pad]).amax(dim=0)
    top = torch.where(top == -1e9, torch.zeros_like(top), top)
    return torch.stack([torch.nan_to_num(x.mean(dim=0)), top])
'''
