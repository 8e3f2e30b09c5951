"""Uses torch.autograd.grad(..., allow_unused=True) (never touches .grad), restores the buffers and the mode itself, returns a sorted set."""
CELL = "preflight"
SOURCE = '''
def preflight(model, loader, distributed):
    codes = set()
    bn_types = (nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d)
    if distributed and any(type(m) in bn_types for m in model.modules()):
        codes.add("bn_not_synced")
    if distributed and not isinstance(loader.dataset, torch.utils.data.IterableDataset):
        if not isinstance(loader.sampler, torch.utils.data.distributed.DistributedSampler):
            codes.add("sampler_not_distributed")
    if loader.pin_memory and not torch.cuda.is_available():
        codes.add("pin_memory_without_cuda")
    params = [p for p in model.parameters() if p.requires_grad]
    if params:
        buffers = {k: v.clone() for k, v in model.named_buffers()}
        x = next(iter(loader))[0]
        try:
            grads = torch.autograd.grad(model(x).sum(), params, allow_unused=True)
        finally:
            with torch.no_grad():
                for k, v in model.named_buffers():
                    v.copy_(buffers[k])
        if any(g is None for g in grads):
            codes.add("unused_parameters")
    return sorted(codes)
'''
