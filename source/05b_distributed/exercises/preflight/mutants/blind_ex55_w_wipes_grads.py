"""Probes the model itself in eval() (mode restored), then zero_grad(set_to_none=True): gradients that were already there are wiped. (written blind, from the release alone)."""
CELL = 'preflight'
KIND = 'mutation'
NOTE = "Probing the model itself changes it: clearing its gradients before or after the probe backward wipes the gradients it already had, which must be left exactly as they were found."
FAILS = ['test_preflight_unused']
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
    was_training = model.training
    model.eval()                          # no running-stat update
    model.zero_grad(set_to_none=True)     # start from no gradients
    try:
        x, _ = next(iter(loader))
        model(x).sum().backward()
        if any(p.requires_grad and p.grad is None for p in model.parameters()):
            codes.append("unused_parameters")
    finally:
        model.zero_grad(set_to_none=True) # leave no gradients behind
        model.train(was_training)
    return codes
'''
