"""Strips DDP's module. prefix only: Lightning's nesting is unwrapped but its model. prefix stays, so those keys count as unknown."""
KIND = "edge-case"
NOTE = "DDP's module. is not the only wrapper prefix: a Lightning checkpoint names the wrapped network model., so its keys still name no entry of a bare model unless that prefix is handled too."
CELL = "load_checkpoint_flexible"
FAILS = ["test_load_lightning", "test_load_unseen_formats"]
#: the reference solution with these lines changed (old, new)
CHANGES = [
('''
        while name not in own and name.startswith(("module.", "model.")):
''', '''
        while name not in own and name.startswith("module."):
'''),
]
