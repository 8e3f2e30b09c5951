"""Flags every _BatchNorm under distributed training, SyncBatchNorm included (a false positive)."""
CELL = "preflight"
KIND = "wrong-value"
NOTE = "SyncBatchNorm is itself a subclass of _BatchNorm: an isinstance check against _BatchNorm alone flags synced BatchNorm layers too."
FAILS = ['test_preflight_clean', 'test_preflight_bn']
SOURCE = '''
def preflight(model, loader, distributed):
    issues = []
    if distributed and any(isinstance(m, nn.modules.batchnorm._BatchNorm) for m in model.modules()):
        issues.append("bn_not_synced")
    if (distributed and not isinstance(loader.dataset, torch.utils.data.IterableDataset)
            and not isinstance(loader.sampler, DistributedSampler)):
        issues.append("sampler_not_distributed")
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
