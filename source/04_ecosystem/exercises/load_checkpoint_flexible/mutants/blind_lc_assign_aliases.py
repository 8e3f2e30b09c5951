"""Loads with load_state_dict(..., assign=True): the model's tensors become the checkpoint's own tensors (no copy, dtype not kept). (written blind, from the release alone)."""
CELL = 'load_checkpoint_flexible'
KIND = 'mutation'
NOTE = "Loading with assign=True makes the model's tensors the checkpoint's own tensors instead of copying into them: model and checkpoint then share storage, and the model's dtypes are not kept."
FAILS = ['test_load_contract']
SOURCE = '''
def load_checkpoint_flexible(model: nn.Module, checkpoint: dict) -> LoadReport:
    """Load a plain / DDP / Lightning / different-head checkpoint into `model`; return what was loaded, skipped, missing."""
    sd = checkpoint["state_dict"] if isinstance(checkpoint.get("state_dict"), dict) else checkpoint
    own = model.state_dict()
    clean, skipped = {}, []
    for key, value in sd.items():
        if not isinstance(value, torch.Tensor):
            continue
        name = key
        while name not in own and name.startswith(("module.", "model.")):
            name = name.split(".", 1)[1]
        if name not in own:
            raise KeyError(f"unknown checkpoint key: {key}")
        if value.shape != own[name].shape:
            skipped.append(name)
        else:
            clean[name] = value
    model.load_state_dict(clean, strict=False, assign=True)   # fast: no copy
    return LoadReport(loaded=list(clean), skipped=skipped, missing=[k for k in own if k not in clean])
'''
