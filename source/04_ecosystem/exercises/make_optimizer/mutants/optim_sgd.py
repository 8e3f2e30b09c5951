"""Right parameter groups, wrong optimizer: torch.optim.SGD (the default of create_optimizer_v2)."""
KIND = "contract"
NOTE = "Right parameter groups in the wrong optimizer: the groups only carry learning rates and weight decay, the optimizer class decides the update rule, and the statement asks for AdamW."
CELL = "make_optimizer"
FAILS = ["test_make_optimizer_type"]
#: the reference solution with these lines changed (old, new)
CHANGES = [
('''
    return torch.optim.AdamW([{"params": ps, "weight_decay": wd, "lr": glr} for (wd, glr), ps in groups.items()],
                             lr=lr, weight_decay=weight_decay)
''', '''
    return torch.optim.SGD([{"params": ps, "weight_decay": wd, "lr": glr} for (wd, glr), ps in groups.items()],
                             lr=lr, weight_decay=weight_decay, momentum=0.9)
'''),
]
