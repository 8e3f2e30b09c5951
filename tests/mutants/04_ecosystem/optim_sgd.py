"""Right parameter groups, wrong optimizer: torch.optim.SGD (the default of create_optimizer_v2)."""
KIND = "contract"
NOTE = "Right parameter groups in the wrong optimizer: the groups only carry learning rates and weight decay, the optimizer class decides the update rule, and the statement asks for AdamW."
CELL = "make_optimizer"
FAILS = ["test_make_optimizer_type"]
SOURCE = '''
def make_optimizer(model: nn.Module, lr: float, weight_decay: float, head_lr_mult: float = 10.0) -> torch.optim.AdamW:
    """Return AdamW over model's trainable parameters: timm's weight-decay rule, lr * head_lr_mult on the classifier."""
    import fnmatch
    no_wd = set(model.no_weight_decay()) if hasattr(model, "no_weight_decay") else set()
    head = {id(p) for p in model.get_classifier().parameters()} if hasattr(model, "get_classifier") else set()
    groups = {}
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        exempt = p.ndim <= 1 or name.endswith(".bias") or any(fnmatch.fnmatch(name, pat) for pat in no_wd)
        key = (0.0 if exempt or not weight_decay else float(weight_decay),
               lr * head_lr_mult if id(p) in head else lr)
        groups.setdefault(key, []).append(p)
    return torch.optim.SGD([{"params": ps, "weight_decay": wd, "lr": glr} for (wd, glr), ps in groups.items()],
                             lr=lr, weight_decay=weight_decay, momentum=0.9)
'''
