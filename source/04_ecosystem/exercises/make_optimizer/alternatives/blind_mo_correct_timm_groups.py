"""Correct: timm's own param_groups_weight_decay (fnmatch on no_weight_decay()), each group split by identity into head / body. (written blind, from the release alone)."""
CELL = 'make_optimizer'
SOURCE = '''
from timm.optim import param_groups_weight_decay


def make_optimizer(model: nn.Module, lr: float, weight_decay: float, head_lr_mult: float = 10.0) -> torch.optim.AdamW:
    """Return AdamW over model's trainable parameters: timm's weight-decay rule, lr * head_lr_mult on the classifier."""
    no_wd = model.no_weight_decay() if hasattr(model, "no_weight_decay") else ()
    head = model.get_classifier() if hasattr(model, "get_classifier") else None
    heads = head if isinstance(head, (tuple, list)) else (head,)     # distilled models return (head, head_dist)
    head_ids = {id(p) for h in heads if isinstance(h, nn.Module) for p in h.parameters()}
    groups = []
    # timm's helper: skips frozen parameters, lists a shared one once, weight_decay=0 -> everything in the 0 group
    for g in param_groups_weight_decay(model, weight_decay, no_weight_decay_list=no_wd):
        for is_head in (False, True):
            params = [p for p in g["params"] if (id(p) in head_ids) == is_head]
            if params:
                groups.append({"params": params, "weight_decay": g["weight_decay"],
                               "lr": lr * head_lr_mult if is_head else lr})
    return torch.optim.AdamW(groups, lr=lr)
'''
