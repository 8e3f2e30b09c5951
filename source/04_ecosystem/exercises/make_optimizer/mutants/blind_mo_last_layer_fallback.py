"""Treats the last child module as the head when the model has no get_classifier (e.g. an nn.Sequential): it then gets lr * head_lr_mult. (written blind, from the release alone)."""
CELL = 'make_optimizer'
KIND = 'contract'
NOTE = "A model without a classifier method has no head under the statement's rule: guessing that its last layer is the head gives that layer a learning rate it should not get."
FAILS = ['test_make_optimizer_lr']
SOURCE = '''
import fnmatch


def make_optimizer(model: nn.Module, lr: float, weight_decay: float, head_lr_mult: float = 10.0) -> torch.optim.AdamW:
    """Return AdamW over model's trainable parameters: timm's weight-decay rule, lr * head_lr_mult on the classifier."""
    no_wd = model.no_weight_decay() if hasattr(model, "no_weight_decay") else ()
    if hasattr(model, "get_classifier"):
        head = model.get_classifier()
    else:
        head = list(model.children())[-1] if len(list(model.children())) else nn.Identity()   # the last layer
    head_ids = {id(p) for p in head.parameters()}
    groups = {}
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        exempt = p.ndim <= 1 or name.endswith(".bias") or any(fnmatch.fnmatch(name, pat) for pat in no_wd)
        key = (0.0 if exempt else weight_decay, lr * head_lr_mult if id(p) in head_ids else lr)
        groups.setdefault(key, []).append(p)
    return torch.optim.AdamW([{"params": ps, "weight_decay": wd, "lr": g_lr} for (wd, g_lr), ps in groups.items()])
'''
