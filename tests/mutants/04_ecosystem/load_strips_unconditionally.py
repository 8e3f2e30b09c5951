"""Strips every leading module./model. prefix whether or not the key already names an entry: a LightningModule's own
model.0.weight becomes 0.weight and raises KeyError (found twice, independently, in the second edition's review)."""
KIND = "edge-case"
NOTE = "A prefix is only a wrapper's prefix when the key does not already name an entry: a LightningModule's own keys start with model. too, and stripping them breaks its names."
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
        while name.startswith(("module.", "model.")):
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
