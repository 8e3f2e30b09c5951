"""Pads the max with a row of zeros: a set whose values are all negative gets 0 as its max."""
KIND = "wrong-value"
NOTE = "A padding row of zeros wins the max whenever every value in a column is negative: the padding must be a value no real input can lose to."
CELL = "summarise_unbacked"
FAILS = ["test_summarise_values", "test_summarise_empty_and_single", "test_summarise_one_graph"]
SOURCE = '''
def summarise_unbacked(x: torch.Tensor) -> torch.Tensor:
    """summarise(x) with no question about the set size: one compiled graph for every L, 0 and 1 included."""
    mean = x.sum(dim=0) / max(x.shape[0], 1)
    top = torch.cat([x, x.new_zeros(1, x.shape[1])]).amax(dim=0)
    return torch.stack([mean, top])
'''
