"""Guards the max with a -inf row but keeps x.mean(dim=0): NaN for an empty set."""
KIND = "edge-case"
NOTE = "The mean of an empty set is 0 / 0 = NaN: for the empty set to give zeros, the count the mean divides by must never be 0."
CELL = "summarise_unbacked"
FAILS = ["test_summarise_empty_and_single", "test_summarise_one_graph"]
SOURCE = '''
def summarise_unbacked(x: torch.Tensor) -> torch.Tensor:
    """summarise(x) with no question about the set size: one compiled graph for every L, 0 and 1 included."""
    top = torch.cat([x, x.new_full((1, x.shape[1]), float("-inf"))]).amax(dim=0)
    top = torch.where(top == float("-inf"), torch.zeros_like(top), top)
    return torch.stack([x.mean(dim=0), top])
'''
