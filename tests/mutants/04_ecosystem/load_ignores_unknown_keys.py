"""Silently drops keys the model does not have instead of raising KeyError."""
KIND = "contract"
NOTE = "A key that names no entry of the model, even after removing wrapper prefixes, is an error to report: silently skipping it hides a checkpoint that does not fit the model."
CELL = "load_checkpoint_flexible"
FAILS = ["test_load_contract"]
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
        while name not in own and name.startswith(("module.", "model.")):
            name = name.split(".", 1)[1]
        if name not in own:
            continue
        if tuple(value.shape) != tuple(own[name].shape):
            skipped.append(name)
        else:
            cleaned[name] = value
    with torch.no_grad():
        for name, value in cleaned.items():
            own[name].copy_(value)
    return LoadReport(loaded=sorted(cleaned), skipped=sorted(skipped), missing=sorted(set(own) - set(cleaned)))
'''
