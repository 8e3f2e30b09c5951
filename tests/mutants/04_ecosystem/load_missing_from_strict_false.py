"""Takes `missing` from load_state_dict(strict=False) on the rebuilt dict: without _metadata, num_batches_tracked is never reported missing."""
KIND = "wrong-value"
NOTE = "load_state_dict(strict=False) on a rebuilt dict is not a full list of what was not loaded (a dict without _metadata counts as an old checkpoint, so absent buffers go unreported); the model's own keys are."
CELL = "load_checkpoint_flexible"
FAILS = ["test_load_unseen_formats"]
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
    result = model.load_state_dict(cleaned, strict=False)
    return LoadReport(loaded=sorted(cleaned), skipped=sorted(skipped), missing=sorted(result.missing_keys))
'''
