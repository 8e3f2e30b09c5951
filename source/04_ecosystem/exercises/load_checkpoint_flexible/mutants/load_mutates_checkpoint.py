"""Renames the keys inside the caller's dict (pop + re-insert) instead of building a new one: the checkpoint is changed."""
KIND = "mutation"
NOTE = "Cleaning the checkpoint in place (renaming or deleting its entries) changes the caller's dict, which they may reuse; the cleaned state has to live in a new dict while the checkpoint stays as it was."
CELL = "load_checkpoint_flexible"
FAILS = ["test_load_lightning", "test_load_contract"]  # test_load_lightning loads the same checkpoint twice
#: the reference solution with these lines changed (old, new)
CHANGES = [
('''
    for key, value in state.items():
''', '''
    for key in list(state):
        value = state.pop(key)
'''),
('''
            cleaned[name] = value
''', '''
            cleaned[name] = value
        state[name] = value
'''),
]
