"""Takes `missing` from load_state_dict(strict=False) on a rebuilt dict: absent num_batches_tracked buffers are not reported. (written blind, from the release alone)."""
CELL = 'load_checkpoint_flexible'
KIND = 'edge-case'
NOTE = "load_state_dict(strict=False) on a rebuilt dict is not a full list of what was not loaded (a dict without _metadata counts as an old checkpoint, so absent buffers go unreported); the model's own keys are."
FAILS = ['test_load_unseen_formats']
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
    result = model.load_state_dict(clean, strict=False)     # PyTorch reports what it did not load
    return LoadReport(loaded=list(clean), skipped=skipped, missing=list(result.missing_keys))
'''
