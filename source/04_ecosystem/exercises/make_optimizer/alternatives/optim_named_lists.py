"""Decides per parameter name with two name sets (timm's param_groups_weight_decay for the decay side) and one group per parameter."""
CELL = "make_optimizer"
SOURCE = '''
def make_optimizer(model, lr, weight_decay, head_lr_mult=10.0):
    """Return AdamW over model's trainable parameters: timm's weight-decay rule, lr * head_lr_mult on the classifier."""
    from timm.optim import param_groups_weight_decay
    nwd = model.no_weight_decay() if hasattr(model, "no_weight_decay") else ()
    decay_of = {}
    for g in param_groups_weight_decay(model, weight_decay=weight_decay, no_weight_decay_list=nwd):
        for p in g["params"]:
            decay_of[id(p)] = g["weight_decay"]
    head = set()
    if hasattr(model, "get_classifier"):
        head = {id(p) for p in model.get_classifier().parameters()}
    groups = [{"params": [p], "weight_decay": decay_of[id(p)], "lr": lr * (head_lr_mult if id(p) in head else 1.0)}
              for p in model.parameters() if p.requires_grad]
    return torch.optim.AdamW(groups, lr=lr)
'''
