"""Matches no_weight_decay() names with `in` instead of fnmatch: wildcard patterns such as 'blocks.*.scale' are missed."""
KIND = "edge-case"
NOTE = "The entries of no_weight_decay() are patterns, not only exact names: a wildcard entry covers many parameters, so an exact-name membership test misses them and they get decayed."
CELL = "make_optimizer"
FAILS = ["test_make_optimizer_decay_groups"]
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
        exempt = p.ndim <= 1 or name.endswith(".bias") or name in no_wd
        key = (0.0 if exempt or not weight_decay else float(weight_decay),
               lr * head_lr_mult if id(p) in head else lr)
        groups.setdefault(key, []).append(p)
    return torch.optim.AdamW([{"params": ps, "weight_decay": wd, "lr": glr} for (wd, glr), ps in groups.items()],
                             lr=lr, weight_decay=weight_decay)
'''
