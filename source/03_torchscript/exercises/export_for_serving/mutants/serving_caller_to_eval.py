"""Switches the caller's model to eval mode, then exports a deep copy: right outputs, but the caller's modes are lost."""
CELL = "export_for_serving"
KIND = "mutation"
NOTE = "model.eval() changes the caller's model: every submodule, a frozen one included, comes back in eval mode, and training resumed from it silently runs without dropout. Switch the copy, never the model you were given."
FAILS = ["test_serving_snapshot"]
#: the reference solution with these lines changed (old, new)
CHANGES = [
('''
    own = LogitsOf(copy.deepcopy(model).eval())          # a snapshot in eval mode; the caller's model is untouched
''', '''
    model.eval()                                         # the caller's model, not a copy
    own = LogitsOf(copy.deepcopy(model))
'''),
]
