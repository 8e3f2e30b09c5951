"""Flags every _BatchNorm under distributed training, SyncBatchNorm included (a false positive)."""
CELL = "preflight"
KIND = "wrong-value"
NOTE = "SyncBatchNorm is itself a subclass of _BatchNorm: an isinstance check against _BatchNorm alone flags synced BatchNorm layers too."
FAILS = ['test_preflight_clean', 'test_preflight_bn']
#: the reference solution with these lines changed (old, new)
CHANGES = [
('''
    """Return the PREFLIGHT_CODES that apply to this (model, loader, distributed) setup, each once."""
''', ''),
('''
    if distributed and any(isinstance(m, nn.modules.batchnorm._BatchNorm) and not isinstance(m, nn.SyncBatchNorm)
                           for m in model.modules()):
''', '''
    if distributed and any(isinstance(m, nn.modules.batchnorm._BatchNorm) for m in model.modules()):
'''),
('''
    probe = copy.deepcopy(model)  # the model itself keeps its grads, buffers and mode
''', '''
    probe = copy.deepcopy(model)
'''),
]
