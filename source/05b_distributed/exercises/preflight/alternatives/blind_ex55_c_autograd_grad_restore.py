"""Correct: autograd.grad(allow_unused=True) on the model itself (no .grad written), buffers saved and copied back, modes untouched. (written blind, from the release alone)."""
CELL = 'preflight'
SOURCE = '''
from torch.nn.modules.batchnorm import _BatchNorm
from torch.utils.data import IterableDataset

def preflight(model, loader, distributed):
    """Return the PREFLIGHT_CODES that apply to this (model, loader, distributed) setup, each once."""
    codes = []
    if distributed:
        if any(isinstance(m, _BatchNorm) and not isinstance(m, nn.SyncBatchNorm) for m in model.modules()):
            codes.append("bn_not_synced")
        if not isinstance(loader.dataset, IterableDataset) and not isinstance(loader.sampler, DistributedSampler):
            codes.append("sampler_not_distributed")
    if loader.pin_memory and not torch.cuda.is_available():
        codes.append("pin_memory_without_cuda")
    params = [p for p in model.parameters() if p.requires_grad]
    if params:
        saved = [(b, b.detach().clone()) for b in model.buffers()]
        try:
            x = next(iter(loader))[0]
            grads = torch.autograd.grad(model(x).sum(), params, allow_unused=True)
        finally:
            with torch.no_grad():
                for b, v in saved:
                    b.copy_(v)
        if any(g is None for g in grads):
            codes.append("unused_parameters")
    return codes
'''
