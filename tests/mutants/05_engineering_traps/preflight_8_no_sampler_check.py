"""Forgets the sampler check: under DDP every rank would train on the whole dataset."""
CELL = "preflight"
KIND = "contract"
NOTE = "The sampler check is missing: under distributed training, a map-style dataset without a DistributedSampler makes every rank iterate over the whole dataset."
FAILS = ['test_preflight_loader']
SOURCE = '''
def preflight(model, loader, distributed):
    issues = []
    if distributed and any(isinstance(m, nn.modules.batchnorm._BatchNorm) and not isinstance(m, nn.SyncBatchNorm)
                           for m in model.modules()):
        issues.append("bn_not_synced")
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
