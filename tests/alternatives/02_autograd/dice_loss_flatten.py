"""Flattens each sample and sums with einsum over dim 1: the same loss, written differently."""
CELL = "dice_loss"
SOURCE = '''
def dice_loss(logits: torch.Tensor, target: torch.Tensor, eps: float = 1.0) -> torch.Tensor:
    """Return the soft Dice loss (a 0-dim tensor) with a gradient that flows back into logits."""
    p = logits.sigmoid().flatten(1)
    t = target.flatten(1)
    numerator = 2 * torch.einsum("bi,bi->b", p, t) + eps
    denominator = p.sum(1) + t.sum(1) + eps
    return torch.mean(1 - numerator / denominator)
'''
