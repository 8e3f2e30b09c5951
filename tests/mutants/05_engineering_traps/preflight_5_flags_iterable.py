"""Flags any loader without a DistributedSampler, even an IterableDataset (which shards itself and has no sampler to set)."""
CELL = "preflight"
KIND = "edge-case"
NOTE = "An IterableDataset has no sampler to set and must shard itself: only map-style datasets need a DistributedSampler under distributed training."
FAILS = ['test_preflight_clean', 'test_preflight_loader']
SOURCE = '''
def preflight(model, loader, distributed):
    issues = []
    if distributed and any(isinstance(m, nn.modules.batchnorm._BatchNorm) and not isinstance(m, nn.SyncBatchNorm)
                           for m in model.modules()):
        issues.append("bn_not_synced")
    if distributed and not isinstance(loader.sampler, DistributedSampler):
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
