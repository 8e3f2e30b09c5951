"""Runs the test forward/backward on the model itself, clearing its gradients before and after: codes right, but the model's gradients and BatchNorm statistics change."""
CELL = "preflight"
KIND = "mutation"
NOTE = "Probing the model itself changes it: clearing its gradients before or after the probe backward wipes the gradients it already had, which must be left exactly as they were found."
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
    model.zero_grad(set_to_none=True)
    model(x).sum().backward()
    if any(p.requires_grad and p.grad is None for p in model.parameters()):
        issues.append("unused_parameters")
    model.zero_grad(set_to_none=True)
    return issues
'''
