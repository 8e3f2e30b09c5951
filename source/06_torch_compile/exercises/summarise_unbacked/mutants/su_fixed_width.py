"""Builds the padding row with the visible example's width (3 features): fails for any other d."""
KIND = "overfit"
NOTE = "The padding row must have the input's number of features: a width fixed from the visible example fails for any other d."
CELL = "summarise_unbacked"
FAILS = ["test_summarise_values", "test_summarise_empty_and_single", "test_summarise_one_graph"]
SOURCE = '''
def summarise_unbacked(x: torch.Tensor) -> torch.Tensor:
    """summarise(x) with no question about the set size: one compiled graph for every L, 0 and 1 included."""
    mean = x.sum(dim=0) / max(x.shape[0], 1)
    top = torch.cat([x, x.new_full((1, 3), float("-inf"))]).amax(dim=0)
    top = torch.where(top == float("-inf"), torch.zeros_like(top), top)
    return torch.stack([mean, top])
'''
