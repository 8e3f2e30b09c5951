"""Counts every parameter without a gradient, frozen ones (requires_grad=False) included: false positive on a partly frozen model. (written blind, from the release alone)."""
CELL = 'preflight'
KIND = 'edge-case'
NOTE = "Frozen parameters (requires_grad=False) never get a gradient by design: counting them as unused gives a false alarm on a partly frozen model."
FAILS = ['test_preflight_clean', 'test_preflight_unused']
SOURCE = '''
from torch.nn.modules.batchnorm import _BatchNorm
from torch.utils.data import IterableDataset

def preflight(model, loader, distributed):
    """Return the PREFLIGHT_CODES that apply to this (model, loader, distributed) setup, each once."""
    codes = []
    if distributed and any(isinstance(m, _BatchNorm) and not isinstance(m, nn.SyncBatchNorm) for m in model.modules()):
        codes.append("bn_not_synced")
    if distributed and not isinstance(loader.dataset, IterableDataset) and not isinstance(loader.sampler, DistributedSampler):
        codes.append("sampler_not_distributed")
    if loader.pin_memory and not torch.cuda.is_available():
        codes.append("pin_memory_without_cuda")
    probe = copy.deepcopy(model)
    probe.zero_grad(set_to_none=True)
    x, _ = next(iter(loader))
    probe(x).sum().backward()
    if any(p.grad is None for p in probe.parameters()):
        codes.append("unused_parameters")
    return codes
'''
