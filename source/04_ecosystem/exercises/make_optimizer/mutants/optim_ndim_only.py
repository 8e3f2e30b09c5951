"""The first edition's rule: no decay only for ndim <= 1; a ViT's 3-D pos_embed/cls_token and a 2-D '.bias' are decayed."""
KIND = "wrong-value"
NOTE = "timm's exemption rule is more than ndim <= 1: a name ending in .bias and the model's no_weight_decay() entries (a ViT's 3-D position embedding and class token) are exempt too."
CELL = "make_optimizer"
FAILS = ["test_make_optimizer_decay_groups"]
#: the reference solution with these lines changed (old, new)
CHANGES = [
('''
        exempt = p.ndim <= 1 or name.endswith(".bias") or any(fnmatch.fnmatch(name, pat) for pat in no_wd)
''', '''
        exempt = p.ndim <= 1
'''),
]
