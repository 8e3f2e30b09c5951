"""Silences the data-dependent error with torch._check(L > 0): compiles, then fails on every empty set."""
KIND = "edge-case"
NOTE = "torch._check states a fact about every input: asserting that the set is not empty lets the compile succeed, but every empty set then fails at run time. L == 0 must be handled without asking."
CELL = "summarise_unbacked"
FAILS = ["test_summarise_empty_and_single", "test_summarise_one_graph"]
SOURCE = '''
def summarise_unbacked(x: torch.Tensor) -> torch.Tensor:
    """summarise(x) with no question about the set size: one compiled graph for every L, 0 and 1 included."""
    torch._check(x.shape[0] > 0)
    return torch.stack([x.sum(dim=0) / x.shape[0], x.amax(dim=0)])
'''
