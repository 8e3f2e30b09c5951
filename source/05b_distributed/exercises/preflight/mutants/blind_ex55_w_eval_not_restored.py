"""Puts the model in eval() to keep BatchNorm's running stats, clears the grads it made, but never restores the train mode. (written blind, from the release alone)."""
CELL = 'preflight'
KIND = 'mutation'
NOTE = "Switching the model to eval() to protect BatchNorm's statistics is a change too: the train/eval mode it had must be back when the function returns."
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
    model.eval()                       # eval: BatchNorm does not update its running statistics
    x, _ = next(iter(loader))
    params = [p for p in model.parameters() if p.requires_grad]
    grads = torch.autograd.grad(model(x).sum(), params, allow_unused=True)   # writes no .grad
    if any(g is None for g in grads):
        codes.append("unused_parameters")
    return codes
'''
