"""The first edition's answer: timm.optim.create_optimizer_v2(model, opt='adamw', ...): right decay groups, no head learning rate."""
KIND = "wrong-value"
NOTE = "timm's optimizer factory applies the weight-decay rule but gives the classifier the same learning rate as the body: a larger head learning rate needs parameter groups of your own."
CELL = "make_optimizer"
FAILS = ["test_make_optimizer_lr"]
SOURCE = '''
def make_optimizer(model: nn.Module, lr: float, weight_decay: float, head_lr_mult: float = 10.0) -> torch.optim.AdamW:
    """Return AdamW over model's trainable parameters: timm's weight-decay rule, lr * head_lr_mult on the classifier."""
    import timm.optim
    return timm.optim.create_optimizer_v2(model, opt="adamw", lr=lr, weight_decay=weight_decay)
'''
