"""Swapped .detach() for .data: the same cut graph under another name."""
CELL = "dice_loss"
FAILS = ["test_dice_loss_gradient", "test_dice_loss_gradient_signs"]
SOURCE = '''
def dice_loss(logits: torch.Tensor, target: torch.Tensor, eps: float = 1.0) -> torch.Tensor:
    """Return the soft Dice loss (a 0-dim tensor) with a gradient that flows back into logits."""
    p = torch.sigmoid(logits).data
    dims = tuple(range(1, logits.dim()))
    inter = (p * target).sum(dims)
    denom = p.sum(dims) + target.sum(dims)
    dice = (2 * inter + eps) / (denom + eps)
    return (1 - dice).mean()
'''
