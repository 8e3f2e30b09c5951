"""torch.where on a broadcast mask, then einsum with w, and the division last."""
CELL = "pooled_scores"
SOURCE = '''
def pooled_scores(x, lengths, w):
    steps = torch.arange(x.shape[1], device=x.device)
    keep = steps.unsqueeze(0) < lengths.unsqueeze(1)
    masked = torch.where(keep.unsqueeze(-1), x, torch.zeros((), dtype=x.dtype, device=x.device))
    return torch.einsum("btd,d->b", masked, w) / lengths.to(x.dtype)
'''
