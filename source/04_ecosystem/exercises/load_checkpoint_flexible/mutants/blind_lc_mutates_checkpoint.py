"""Cleans the caller's dict in place: pops the non-tensor entries (epoch, note, ...) out of `checkpoint` itself. (written blind, from the release alone)."""
CELL = 'load_checkpoint_flexible'
KIND = 'mutation'
NOTE = "Cleaning the checkpoint in place (renaming or deleting its entries) changes the caller's dict, which they may reuse; the cleaned state has to live in a new dict while the checkpoint stays as it was."
FAILS = ['test_load_contract']
SOURCE = '''
def load_checkpoint_flexible(model: nn.Module, checkpoint: dict) -> LoadReport:
    """Load a plain / DDP / Lightning / different-head checkpoint into `model`; return what was loaded, skipped, missing."""
    sd = checkpoint["state_dict"] if isinstance(checkpoint.get("state_dict"), dict) else checkpoint
    for k in [k for k, v in sd.items() if not torch.is_tensor(v)]:
        del sd[k]                                   # drop "epoch", "note", ...
    own = model.state_dict()
    plan, skipped = {}, []
    for key, value in sd.items():
        name = key
        while name not in own and name.startswith(("module.", "model.")):
            name = name.split(".", 1)[1]
        if name not in own:
            raise KeyError(f"unknown checkpoint key: {key}")
        if value.shape != own[name].shape:
            skipped.append(name)
        else:
            plan[name] = value
    with torch.no_grad():
        for name, value in plan.items():
            own[name].copy_(value)
    return LoadReport(loaded=list(plan), skipped=skipped, missing=[k for k in own if k not in plan])
'''
