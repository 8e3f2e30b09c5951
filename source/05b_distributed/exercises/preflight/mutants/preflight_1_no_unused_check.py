"""Forgets the unused-parameter check."""
CELL = "preflight"
KIND = "contract"
NOTE = "The unused-parameter check is missing: a parameter that requires grad but gets no gradient from one forward/backward is what DDP's find_unused_parameters exists for."
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
    pass
    return issues
'''
