"""Checks p.grad is None on the model itself without clearing first: stale gradients hide the unused head (and the test backward stays on the model)."""
CELL = "preflight"
KIND = "state"
NOTE = "A gradient left from an earlier step hides an unused parameter, and a forward/backward on the model itself writes .grad and, in training mode, updates BatchNorm statistics."
FAILS = ['test_preflight_unused']
SOURCE = '''
def preflight(model, loader, distributed):
    issues = []
    if distributed and any(isinstance(m, nn.modules.batchnorm._BatchNorm) and not isinstance(m, nn.SyncBatchNorm)
                           for m in model.modules()):
        issues.append("bn_not_synced")
    if (distributed and not isinstance(loader.dataset, torch.utils.data.IterableDataset)
            and not isinstance(loader.sampler, DistributedSampler)):
        issues.append("sampler_not_distributed")
    if loader.pin_memory and not torch.cuda.is_available():
        issues.append("pin_memory_without_cuda")
    x, _ = next(iter(loader))
    model(x).sum().backward()
    if any(p.requires_grad and p.grad is None for p in model.parameters()):
        issues.append("unused_parameters")
    return issues
'''
