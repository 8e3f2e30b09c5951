"""Strips every leading module./model. prefix whether or not the key already names an entry: a LightningModule's own
model.0.weight becomes 0.weight and raises KeyError (found twice, independently, in the second edition's review)."""
KIND = "edge-case"
NOTE = "A prefix is only a wrapper's prefix when the key does not already name an entry: a LightningModule's own keys start with model. too, and stripping them breaks its names."
CELL = "load_checkpoint_flexible"
FAILS = ["test_load_lightning", "test_load_unseen_formats"]
#: the reference solution with these lines changed (old, new)
CHANGES = [
('''
        while name not in own and name.startswith(("module.", "model.")):
''', '''
        while name.startswith(("module.", "model.")):
'''),
]
