"""Forgets opt="adamw": create_optimizer_v2 defaults to SGD (the param groups are right)."""
CELL = "make_optimizer"
FAILS = ["test_make_optimizer_type"]
SOURCE = '''
def make_optimizer(model: nn.Module, lr: float, weight_decay: float) -> torch.optim.Optimizer:
    """Return AdamW over `model`'s parameters: `weight_decay` on weights, 0 on biases and norm parameters."""
    import timm.optim
    return timm.optim.create_optimizer_v2(model, lr=lr, weight_decay=weight_decay)
'''
