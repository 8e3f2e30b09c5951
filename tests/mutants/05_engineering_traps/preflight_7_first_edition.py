"""The first edition's checklist: flags num_workers == 0 on every loader (wrong for an in-memory TensorDataset, so every setup here gets a false code) and has no sampler check."""
CELL = "preflight"
FAILS = ['test_preflight_clean', 'test_preflight_loader', 'test_preflight_bn', 'test_preflight_unused']
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
    x, _ = next(iter(loader))
    probe = copy.deepcopy(model)
    probe.zero_grad(set_to_none=True)
    probe(x).sum().backward()
    if any(p.requires_grad and p.grad is None for p in probe.parameters()):
        issues.append("unused_parameters")
    return issues
'''
