"""model.load_state_dict(checkpoint, strict=False) on the raw dict: prefixed keys silently load nothing, unknown keys never raise."""
CELL = "load_checkpoint_flexible"
FAILS = ["test_load_ddp", "test_load_lightning", "test_load_head_mismatch", "test_load_unseen_formats", "test_load_contract"]
SOURCE = '''
def load_checkpoint_flexible(model: nn.Module, checkpoint: dict) -> LoadReport:
    """Load a plain / DDP / Lightning / different-head checkpoint into `model`; return what was loaded, skipped, missing."""
    result = model.load_state_dict(checkpoint, strict=False)
    loaded = [k for k in checkpoint if k not in result.unexpected_keys]
    return LoadReport(loaded=loaded, skipped=[], missing=list(result.missing_keys))
'''
