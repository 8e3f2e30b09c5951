"""Strips DDP's module. prefix only: Lightning's nesting is unwrapped but its model. prefix stays, so those keys count as unknown."""
KIND = "edge-case"
NOTE = "DDP's module. is not the only wrapper prefix: a Lightning checkpoint names the wrapped network model., so its keys still name no entry of a bare model unless that prefix is handled too."
CELL = "load_checkpoint_flexible"
FAILS = ["test_load_lightning", "test_load_unseen_formats"]
SOURCE = '''
def load_checkpoint_flexible(model: nn.Module, checkpoint: dict) -> LoadReport:
    """Load a plain / DDP / Lightning / different-head checkpoint into `model`; return what was loaded, skipped, missing."""
    state = checkpoint["state_dict"] if isinstance(checkpoint.get("state_dict"), dict) else checkpoint
    own = model.state_dict()
    cleaned, skipped = {}, []
    for key, value in state.items():
        if not isinstance(value, torch.Tensor):
            continue
        name = key
        while name not in own and name.startswith("module."):
            name = name.split(".", 1)[1]
        if name not in own:
            raise KeyError(f"checkpoint key {key!r} names no entry of the model")
        if tuple(value.shape) != tuple(own[name].shape):
            skipped.append(name)
        else:
            cleaned[name] = value
    with torch.no_grad():
        for name, value in cleaned.items():
            own[name].copy_(value)
    return LoadReport(loaded=sorted(cleaned), skipped=sorted(skipped), missing=sorted(set(own) - set(cleaned)))
'''
