"""Finds the classifier by its top-level name (fc / head / classifier) instead of by identity: ConvNeXt's head.norm gets the head lr. (written blind, from the release alone)."""
CELL = 'make_optimizer'
KIND = 'overfit'
NOTE = "A name prefix does not identify the classifier: a ConvNeXt's head also holds a norm layer, and other models name their classifier differently. The model's own classifier module says which parameters it holds."
FAILS = ['test_make_optimizer_lr']
SOURCE = '''
import fnmatch


def make_optimizer(model: nn.Module, lr: float, weight_decay: float, head_lr_mult: float = 10.0) -> torch.optim.AdamW:
    """Return AdamW over model's trainable parameters: timm's weight-decay rule, lr * head_lr_mult on the classifier."""
    no_wd = model.no_weight_decay() if hasattr(model, "no_weight_decay") else ()
    has_head = hasattr(model, "get_classifier")
    groups = {}
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        exempt = p.ndim <= 1 or name.endswith(".bias") or any(fnmatch.fnmatch(name, pat) for pat in no_wd)
        is_head = has_head and name.split(".")[0] in ("fc", "head", "classifier")   # where timm keeps its heads
        key = (0.0 if exempt else weight_decay, lr * head_lr_mult if is_head else lr)
        groups.setdefault(key, []).append(p)
    return torch.optim.AdamW([{"params": ps, "weight_decay": wd, "lr": g_lr} for (wd, g_lr), ps in groups.items()])
'''
