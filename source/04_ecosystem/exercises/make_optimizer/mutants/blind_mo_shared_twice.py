"""Walks modules and their own parameters (recurse=False): a parameter shared by two modules (tied weights) lands in a group twice. (written blind, from the release alone)."""
CELL = 'make_optimizer'
KIND = 'edge-case'
NOTE = "Visiting each module's own parameters meets a shared (tied) parameter once per module holding it, so it enters the optimizer twice; every trainable parameter belongs to exactly one group."
FAILS = ['test_make_optimizer_frozen']
SOURCE = '''
import fnmatch


def make_optimizer(model: nn.Module, lr: float, weight_decay: float, head_lr_mult: float = 10.0) -> torch.optim.AdamW:
    """Return AdamW over model's trainable parameters: timm's weight-decay rule, lr * head_lr_mult on the classifier."""
    no_wd = model.no_weight_decay() if hasattr(model, "no_weight_decay") else ()
    head = model.get_classifier() if hasattr(model, "get_classifier") else None
    head_mods = set(head.modules()) if isinstance(head, nn.Module) else set()
    groups = {}
    for mod_name, mod in model.named_modules():                    # module by module
        for p_name, p in mod.named_parameters(recurse=False):
            name = f"{mod_name}.{p_name}" if mod_name else p_name
            if not p.requires_grad:
                continue
            exempt = p.ndim <= 1 or name.endswith(".bias") or any(fnmatch.fnmatch(name, pat) for pat in no_wd)
            key = (0.0 if exempt else weight_decay, lr * head_lr_mult if mod in head_mods else lr)
            groups.setdefault(key, []).append(p)
    return torch.optim.AdamW([{"params": ps, "weight_decay": wd, "lr": g_lr} for (wd, g_lr), ps in groups.items()])
'''
