"""Matches no_weight_decay() names exactly (name in set) instead of with fnmatch: wildcard patterns such as XCiT's 'pos_embed.*' are missed. (written blind, from the release alone)."""
CELL = 'make_optimizer'
KIND = 'edge-case'
NOTE = "The entries of no_weight_decay() are patterns, not only exact names: a wildcard entry covers many parameters, so an exact-name membership test misses them and they get decayed."
FAILS = ['test_make_optimizer_decay_groups']
SOURCE = '''
def make_optimizer(model: nn.Module, lr: float, weight_decay: float, head_lr_mult: float = 10.0) -> torch.optim.AdamW:
    """Return AdamW over model's trainable parameters: timm's weight-decay rule, lr * head_lr_mult on the classifier."""
    skip = set(model.no_weight_decay()) if hasattr(model, "no_weight_decay") else set()
    head_ids = {id(p) for p in model.get_classifier().parameters()} if hasattr(model, "get_classifier") else set()
    buckets = {}
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        exempt = p.ndim <= 1 or name.endswith(".bias") or name in skip
        key = (0.0 if exempt else weight_decay, lr * head_lr_mult if id(p) in head_ids else lr)
        buckets.setdefault(key, []).append(p)
    return torch.optim.AdamW([{"params": ps, "weight_decay": wd, "lr": g_lr} for (wd, g_lr), ps in buckets.items()])
'''
