"""Flags any loader whose sampler is not a DistributedSampler, IterableDataset included (a false positive). (written blind, from the release alone)."""
CELL = 'preflight'
KIND = 'edge-case'
NOTE = "An IterableDataset has no sampler to set and must shard itself: only map-style datasets need a DistributedSampler under distributed training."
FAILS = ['test_preflight_clean', 'test_preflight_loader']
SOURCE = '''
from torch.nn.modules.batchnorm import _BatchNorm

def preflight(model, loader, distributed):
    """Return the PREFLIGHT_CODES that apply to this (model, loader, distributed) setup, each once."""
    codes = set()
    if distributed:
        for m in model.modules():
            if isinstance(m, _BatchNorm) and not isinstance(m, nn.SyncBatchNorm):
                codes.add("bn_not_synced")
        if not isinstance(loader.sampler, DistributedSampler):
            codes.add("sampler_not_distributed")
    if loader.pin_memory and not torch.cuda.is_available():
        codes.add("pin_memory_without_cuda")
    probe = copy.deepcopy(model)
    probe.zero_grad(set_to_none=True)
    x = next(iter(loader))[0]
    probe(x).sum().backward()
    if any(p.requires_grad and p.grad is None for p in probe.parameters()):
        codes.add("unused_parameters")
    return list(codes)
'''
