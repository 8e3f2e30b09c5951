"""Copies each tensor as soon as its key is cleaned, so a KeyError on a later key leaves a half-loaded model."""
KIND = "state"
NOTE = "Copying each tensor as soon as its key is resolved means an unknown key found later leaves a half-loaded model: every key must be checked before the model is changed."
CELL = "load_checkpoint_flexible"
FAILS = ["test_load_contract"]
#: the reference solution with these lines changed (old, new)
CHANGES = [
('''
            cleaned[name] = value
''', '''
            cleaned[name] = value
            with torch.no_grad():
                own[name].copy_(value)
'''),
]
