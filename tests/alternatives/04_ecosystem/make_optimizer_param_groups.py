"""Builds the two parameter groups by hand (ndim <= 1 or .bias: no decay) and passes them to create_optimizer_v2."""
CELL = "make_optimizer"
SOURCE = '''
def make_optimizer(model: nn.Module, lr: float, weight_decay: float) -> torch.optim.Optimizer:
    """Return AdamW over `model`'s parameters: `weight_decay` on weights, 0 on biases and norm parameters."""
    import timm.optim
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        (no_decay if p.ndim <= 1 or name.endswith(".bias") else decay).append(p)
    groups = [{"params": no_decay, "weight_decay": 0.0}, {"params": decay, "weight_decay": weight_decay}]
    return timm.optim.create_optimizer_v2(groups, opt="adamw", lr=lr, weight_decay=weight_decay)
'''
