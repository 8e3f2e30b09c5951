"""Correct: pad one -inf row with F.pad, amax, then nan_to_num(neginf=0) on the max only; mean = sum / max(L, 1). (written blind, from the release alone)."""
CELL = 'summarise_unbacked'
SOURCE = '''
def summarise_unbacked(x: torch.Tensor) -> torch.Tensor:
    """summarise(x) with no question about the set size: one compiled graph for every L, 0 and 1 included."""
    mean = x.sum(dim=0) / max(x.shape[0], 1)                     # sum of an empty set is 0
    padded = torch.nn.functional.pad(x, (0, 0, 0, 1), value=float("-inf"))   # (L + 1, d), never empty
    top = padded.amax(dim=0)                                     # -inf only where the set was empty
    top = top.masked_fill(top == float("-inf"), 0)
    return torch.stack([mean, top])
'''
