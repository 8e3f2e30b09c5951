"""Converts only the top-level BatchNorm layers; nested ones stay plain BatchNorm."""
CELL = "prepare_for_ddp"
FAILS = ["test_prepare_ddp_structure", "test_prepare_ddp_order"]
SOURCE = '''
def prepare_for_ddp(model):
    for name, child in list(model.named_children()):
        if isinstance(child, nn.modules.batchnorm._BatchNorm):
            setattr(model, name, nn.SyncBatchNorm.convert_sync_batchnorm(child))
    if torch.cuda.is_available() and dist.is_initialized():
        model = DDP(model)
    return model
'''
