"""Replaces BatchNorm with fresh SyncBatchNorm layers: trained weights and running stats are lost."""
CELL = "prepare_for_ddp"
FAILS = ["test_prepare_ddp_values"]
SOURCE = '''
def _swap(module):
    for name, child in module.named_children():
        if isinstance(child, nn.modules.batchnorm._BatchNorm):
            setattr(module, name, nn.SyncBatchNorm(child.num_features, affine=child.affine,
                                                   track_running_stats=child.track_running_stats))
        else:
            _swap(child)
    return module

def prepare_for_ddp(model):
    model = _swap(model)
    if torch.cuda.is_available() and dist.is_initialized():
        model = DDP(model)
    return model
'''
