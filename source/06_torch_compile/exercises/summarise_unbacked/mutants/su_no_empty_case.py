"""Drops the branch and the empty case: mean and amax of an empty set (NaN and an error)."""
KIND = "edge-case"
NOTE = "Without the branch the empty set is not handled at all: its mean is NaN and a max over an empty dimension raises. Both must give zeros for L == 0 without asking which L it got."
CELL = "summarise_unbacked"
FAILS = ["test_summarise_empty_and_single", "test_summarise_one_graph"]
SOURCE = '''
def summarise_unbacked(x: torch.Tensor) -> torch.Tensor:
    """summarise(x) with no question about the set size: one compiled graph for every L, 0 and 1 included."""
    return torch.stack([x.mean(dim=0), x.amax(dim=0)])
'''
