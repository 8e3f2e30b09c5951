"""Do-nothing: returns None instead of an optimizer; every grade cell of Exercise 4.2 must fail."""
KIND = "do-nothing"
NOTE = "The answer does not do the work the statement asks for yet: it returns a placeholder instead of an optimizer."
CELL = "make_optimizer"
FAILS = ["test_make_optimizer_type", "test_make_optimizer_decay_groups", "test_make_optimizer_lr", "test_make_optimizer_frozen"]
SOURCE = '''
def make_optimizer(model: nn.Module, lr: float, weight_decay: float, head_lr_mult: float = 10.0) -> torch.optim.AdamW:
    """Return AdamW over model's trainable parameters: timm's weight-decay rule, lr * head_lr_mult on the classifier."""
    return None
'''
