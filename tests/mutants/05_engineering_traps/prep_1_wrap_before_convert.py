"""Wraps in DDP first, then converts BatchNorm: DDP was built around the old modules."""
CELL = "prepare_for_ddp"
FAILS = ["test_prepare_ddp_order"]
SOURCE = '''
def prepare_for_ddp(model):
    if torch.cuda.is_available() and dist.is_initialized():
        model = DDP(model)
    return nn.SyncBatchNorm.convert_sync_batchnorm(model)
'''
