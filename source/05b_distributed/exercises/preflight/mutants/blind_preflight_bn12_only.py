"""Checks isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)) only: a BatchNorm3d is missed. (a wrong answer found by a blind review, issue 29)."""
CELL = "preflight"
KIND = "overfit"
NOTE = "A tuple of the BatchNorm classes you have seen is not 'a BatchNorm layer': BatchNorm3d (video, volumes) computes batch statistics too. Test against the class every BatchNorm shares, nn.modules.batchnorm._BatchNorm."
FAILS = ['test_preflight_bn']
SOURCE = '''
def preflight(model, loader, distributed):
    issues = []
    if distributed and any(isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)) for m in model.modules()):
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
