"""Wraps in DDP whenever CUDA is available, without checking for a process group."""
CELL = "prepare_for_ddp"
FAILS = ['test_prepare_ddp_order']
SOURCE = '''
def prepare_for_ddp(model):
    model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    if torch.cuda.is_available():
        model = DDP(model)
    return model
'''
