"""Returns the set itself."""
KIND = "do-nothing"
NOTE = "The answer does not do the work the statement asks for yet: it returns a placeholder (the set itself) instead of a (2, d) summary."
CELL = "summarise_unbacked"
FAILS = ["test_summarise_values", "test_summarise_empty_and_single", "test_summarise_one_graph"]
SOURCE = '''
def summarise_unbacked(x: torch.Tensor) -> torch.Tensor:
    """summarise(x) with no question about the set size: one compiled graph for every L, 0 and 1 included."""
    return x
'''
