"""Copies the state_dict into SyncBatchNorm layers built with default eps and momentum."""
CELL = "prepare_for_ddp"
FAILS = ['test_prepare_ddp_values']
SOURCE = '''
def _swap(module):
    for name, child in module.named_children():
        if isinstance(child, nn.modules.batchnorm._BatchNorm):
            new = nn.SyncBatchNorm(child.num_features, affine=child.affine,
                                   track_running_stats=child.track_running_stats)
            new.load_state_dict(child.state_dict())
            setattr(module, name, new)
        else:
            _swap(child)
    return module

def prepare_for_ddp(model):
    model = _swap(model)
    if torch.cuda.is_available() and dist.is_initialized():
        model = DDP(model)
    return model
'''
