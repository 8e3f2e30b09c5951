"""Copies each tensor as soon as its key is cleaned, so a KeyError on a later key leaves a half-loaded model."""
KIND = "state"
NOTE = "Copying each tensor as soon as its key is resolved means an unknown key found later leaves a half-loaded model: every key must be checked before the model is changed."
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
            raise KeyError(f"checkpoint key {key!r} names no entry of the model")
        if tuple(value.shape) != tuple(own[name].shape):
            skipped.append(name)
        else:
            cleaned[name] = value
            with torch.no_grad():
                own[name].copy_(value)
    with torch.no_grad():
        for name, value in cleaned.items():
            own[name].copy_(value)
    return LoadReport(loaded=sorted(cleaned), skipped=sorted(skipped), missing=sorted(set(own) - set(cleaned)))
'''
