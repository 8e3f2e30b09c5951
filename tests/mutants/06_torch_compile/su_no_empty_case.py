"""Drops the branch and the empty case: mean and amax of an empty set (NaN and an error)."""
KIND = "edge-case"
CELL = "summarise_unbacked"
FAILS = ["test_summarise_empty_and_single", "test_summarise_one_graph"]
SOURCE = '''
def summarise_unbacked(x: torch.Tensor) -> torch.Tensor:
    """summarise(x) with no question about the set size: one compiled graph for every L, 0 and 1 included."""
    return torch.stack([x.mean(dim=0), x.amax(dim=0)])
'''
