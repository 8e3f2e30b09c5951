"""torch.optim.AdamW(model.parameters(), ...): one group, so biases and norm weights are decayed too."""
CELL = "make_optimizer"
FAILS = ["test_make_optimizer_decay_groups"]
SOURCE = '''
def make_optimizer(model: nn.Module, lr: float, weight_decay: float) -> torch.optim.Optimizer:
    """Return AdamW over `model`'s parameters: `weight_decay` on weights, 0 on biases and norm parameters."""
    return torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)
'''
