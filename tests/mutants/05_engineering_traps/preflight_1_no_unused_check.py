"""Forgets the unused-parameter check."""
CELL = "preflight"
FAILS = ["test_preflight_unused"]
SOURCE = '''
def preflight(model, loader, distributed):
    issues = []
    if distributed and any(isinstance(m, nn.modules.batchnorm._BatchNorm) and not isinstance(m, nn.SyncBatchNorm)
                           for m in model.modules()):
        issues.append("bn_not_synced")
    if loader.num_workers == 0:
        issues.append("no_workers")
    if loader.pin_memory and not torch.cuda.is_available():
        issues.append("pin_memory_without_cuda")
    return issues
'''
