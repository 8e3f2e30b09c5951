"""The denominator computed under torch.no_grad() ("it is just a normaliser"): the gradient is nonzero but wrong."""
CELL = "dice_loss"
FAILS = ["test_dice_loss_gradient", "test_dice_loss_gradient_signs"]
SOURCE = '''
def dice_loss(logits: torch.Tensor, target: torch.Tensor, eps: float = 1.0) -> torch.Tensor:
    """Return the soft Dice loss (a 0-dim tensor) with a gradient that flows back into logits."""
    probs = torch.sigmoid(logits)
    dims = tuple(range(1, logits.dim()))
    inter = (probs * target).sum(dims)
    with torch.no_grad():
        denom = probs.sum(dims) + target.sum(dims)
    dice = (2 * inter + eps) / (denom + eps)
    return (1 - dice).mean()
'''
