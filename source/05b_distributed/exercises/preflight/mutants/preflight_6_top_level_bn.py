"""Looks for BatchNorm only among the model's direct children: a nested BatchNorm is missed."""
CELL = "preflight"
KIND = "overfit"
NOTE = "model.children() yields only the direct children: a BatchNorm nested inside a block is missed. The check has to look at every module, at any depth."
FAILS = ['test_preflight_bn']
#: the reference solution with these lines changed (old, new)
CHANGES = [
('''
    """Return the PREFLIGHT_CODES that apply to this (model, loader, distributed) setup, each once."""
''', ''),
('''
                           for m in model.modules()):
''', '''
                           for m in model.children()):
'''),
('''
    probe = copy.deepcopy(model)  # the model itself keeps its grads, buffers and mode
''', '''
    probe = copy.deepcopy(model)
'''),
]
