"""Uses torch.autograd.grad(..., allow_unused=True) (never touches .grad) and a set of codes."""
CELL = "preflight"
SOURCE = '''
def preflight(model, loader, distributed):
    codes = set()
    bn_types = (nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d)
    if distributed and any(type(m) in bn_types for m in model.modules()):
        codes.add("bn_not_synced")
    if not loader.num_workers:
        codes.add("no_workers")
    if loader.pin_memory and not torch.cuda.is_available():
        codes.add("pin_memory_without_cuda")
    params = [p for p in model.parameters() if p.requires_grad]
    if params:
        x = next(iter(loader))[0]
        grads = torch.autograd.grad(model(x).sum(), params, allow_unused=True)
        if any(g is None for g in grads):
            codes.add("unused_parameters")
    return sorted(codes)
'''
