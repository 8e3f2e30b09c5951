"""Strips the prefixes but does not drop the mismatched head: load_state_dict raises a size mismatch."""
CELL = "load_checkpoint_flexible"
FAILS = ["test_load_head_mismatch", "test_load_unseen_formats"]
SOURCE = '''
def load_checkpoint_flexible(model: nn.Module, checkpoint: dict) -> LoadReport:
    """Load a plain / DDP / Lightning / different-head checkpoint into `model`; return what was loaded, skipped, missing."""
    state = checkpoint.get("state_dict", checkpoint)
    own = model.state_dict()
    cleaned = {}
    for key, value in state.items():
        while key not in own and key.startswith(("module.", "model.")):
            key = key.split(".", 1)[1]
        cleaned[key] = value
    model.load_state_dict(cleaned)
    return LoadReport(loaded=list(cleaned), skipped=[], missing=[k for k in own if k not in cleaned])
'''
