"""Keeps summarise's Python branch on the size: right eagerly, but a data-dependent error under mark_unbacked."""
KIND = "contract"
NOTE = "A Python if on an unbacked size asks a question Dynamo cannot answer (there is no example value to guard on), so the compile fails: the code must be right for every L without branching on it."
CELL = "summarise_unbacked"
FAILS = ["test_summarise_one_graph"]
SOURCE = '''
def summarise_unbacked(x: torch.Tensor) -> torch.Tensor:
    """summarise(x) with no question about the set size: one compiled graph for every L, 0 and 1 included."""
    if x.shape[0] == 0:
        return x.new_zeros(2, x.shape[1])
    return torch.stack([x.mean(dim=0), x.amax(dim=0)])
'''
