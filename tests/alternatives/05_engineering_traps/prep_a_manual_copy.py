"""Replaces BatchNorm layers by hand, copying the state with load_state_dict; checks dist.is_available() too."""
CELL = "prepare_for_ddp"
SOURCE = '''
def _convert(module):
    if isinstance(module, nn.modules.batchnorm._BatchNorm) and not isinstance(module, nn.SyncBatchNorm):
        new = nn.SyncBatchNorm(module.num_features, eps=module.eps, momentum=module.momentum,
                               affine=module.affine, track_running_stats=module.track_running_stats)
        new.load_state_dict(module.state_dict())
        new.train(module.training)
        return new
    for name, child in module.named_children():
        setattr(module, name, _convert(child))
    return module

def prepare_for_ddp(model):
    model = _convert(model)
    if dist.is_available() and dist.is_initialized() and torch.cuda.is_available():
        return torch.nn.parallel.DistributedDataParallel(model)
    return model
'''
