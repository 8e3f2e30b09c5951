"""Renames the keys inside the caller's dict (pop + re-insert) instead of building a new one: the checkpoint is changed."""
KIND = "mutation"
NOTE = "Cleaning the checkpoint in place (renaming or deleting its entries) changes the caller's dict, which they may reuse; the cleaned state has to live in a new dict while the checkpoint stays as it was."
CELL = "load_checkpoint_flexible"
FAILS = ["test_load_lightning", "test_load_contract"]  # test_load_lightning loads the same checkpoint twice
SOURCE = '''
def load_checkpoint_flexible(model: nn.Module, checkpoint: dict) -> LoadReport:
    """Load a plain / DDP / Lightning / different-head checkpoint into `model`; return what was loaded, skipped, missing."""
    state = checkpoint["state_dict"] if isinstance(checkpoint.get("state_dict"), dict) else checkpoint
    own = model.state_dict()
    cleaned, skipped = {}, []
    for key in list(state):
        value = state.pop(key)
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
        state[name] = value
    with torch.no_grad():
        for name, value in cleaned.items():
            own[name].copy_(value)
    return LoadReport(loaded=sorted(cleaned), skipped=sorted(skipped), missing=sorted(set(own) - set(cleaned)))
'''
