"""Finds the head by name (starts with 'head' or 'fc'): a ConvNeXt's head.norm gets the head lr, an EfficientNet's 'classifier' does not."""
KIND = "overfit"
NOTE = "A name prefix does not identify the classifier: a ConvNeXt's head also holds a norm layer, and other models name their classifier differently. The model's own classifier module says which parameters it holds."
CELL = "make_optimizer"
FAILS = ["test_make_optimizer_lr"]
SOURCE = '''
def make_optimizer(model: nn.Module, lr: float, weight_decay: float, head_lr_mult: float = 10.0) -> torch.optim.AdamW:
    """Return AdamW over model's trainable parameters: timm's weight-decay rule, lr * head_lr_mult on the classifier."""
    import fnmatch
    no_wd = set(model.no_weight_decay()) if hasattr(model, "no_weight_decay") else set()
    head = {id(p) for n, p in model.named_parameters() if n.startswith(("head", "fc"))}
    groups = {}
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        exempt = p.ndim <= 1 or name.endswith(".bias") or any(fnmatch.fnmatch(name, pat) for pat in no_wd)
        key = (0.0 if exempt or not weight_decay else float(weight_decay),
               lr * head_lr_mult if id(p) in head else lr)
        groups.setdefault(key, []).append(p)
    return torch.optim.AdamW([{"params": ps, "weight_decay": wd, "lr": glr} for (wd, glr), ps in groups.items()],
                             lr=lr, weight_decay=weight_decay)
'''
