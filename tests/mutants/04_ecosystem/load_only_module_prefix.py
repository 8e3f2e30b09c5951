"""Strips DDP's module. prefix but forgets Lightning's nesting and its model. prefix."""
CELL = "load_checkpoint_flexible"
FAILS = ["test_load_lightning", "test_load_unseen_formats"]
SOURCE = '''
def load_checkpoint_flexible(model: nn.Module, checkpoint: dict) -> LoadReport:
    """Load a plain / DDP / Lightning / different-head checkpoint into `model`; return what was loaded, skipped, missing."""
    own = model.state_dict()
    cleaned = {}
    for key, value in checkpoint.items():
        if key.startswith("module."):
            key = key[len("module."):]
        cleaned[key] = value
    skipped = [k for k, v in cleaned.items() if k in own and hasattr(v, "shape") and v.shape != own[k].shape]
    for k in skipped:
        del cleaned[k]
    result = model.load_state_dict(cleaned, strict=False)
    loaded = [k for k in cleaned if k in own]
    return LoadReport(loaded=loaded, skipped=skipped, missing=list(result.missing_keys))
'''
