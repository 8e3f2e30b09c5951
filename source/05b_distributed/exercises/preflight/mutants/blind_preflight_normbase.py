"""Tests isinstance(m, torch.nn.modules.batchnorm._NormBase): InstanceNorm is flagged as an unsynchronised BatchNorm. (a wrong answer found by a blind review, issue 29)."""
CELL = "preflight"
KIND = "wrong-value"
NOTE = "_NormBase is the base of InstanceNorm as well as BatchNorm. InstanceNorm normalises each sample with its own statistics, so splitting the batch across ranks changes nothing: there is nothing to synchronise."
FAILS = ['test_preflight_bn']
SOURCE = '''
from torch.nn.modules.batchnorm import _NormBase


def preflight(model, loader, distributed):
    issues = []
    if distributed and any(isinstance(m, _NormBase) and not isinstance(m, nn.SyncBatchNorm) for m in model.modules()):
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
