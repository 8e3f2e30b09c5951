"""Lets timm's create_optimizer_v2 decide the decay groups, then splits each group into body and head and builds a new AdamW."""
CELL = "make_optimizer"
SOURCE = '''
def make_optimizer(model, lr, weight_decay, head_lr_mult=10.0):
    """Return AdamW over model's trainable parameters: timm's weight-decay rule, lr * head_lr_mult on the classifier."""
    import timm.optim
    base = timm.optim.create_optimizer_v2(model, opt="adamw", lr=lr, weight_decay=weight_decay)
    head_ids = set()
    if hasattr(model, "get_classifier"):
        head_ids = {id(p) for p in model.get_classifier().parameters()}
    groups = []
    for g in base.param_groups:
        body = [p for p in g["params"] if id(p) not in head_ids]
        head = [p for p in g["params"] if id(p) in head_ids]
        if body:
            groups.append({"params": body, "weight_decay": g["weight_decay"], "lr": lr})
        if head:
            groups.append({"params": head, "weight_decay": g["weight_decay"], "lr": lr * head_lr_mult})
    return torch.optim.AdamW(groups)
'''
