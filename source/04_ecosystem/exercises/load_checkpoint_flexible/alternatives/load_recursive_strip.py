"""Strips prefixes with a small recursive helper, validates first, then loads with a strict load of the model's own state merged with the cleaned tensors."""
CELL = "load_checkpoint_flexible"
SOURCE = '''
def load_checkpoint_flexible(model, checkpoint):
    """Load a plain / DDP / Lightning / different-head checkpoint into `model`; return what was loaded, skipped, missing."""
    def strip(name, own):
        if name in own:
            return name
        for prefix in ("model.", "module."):
            if name.startswith(prefix):
                return strip(name[len(prefix):], own)
        return None

    sd = checkpoint.get("state_dict")
    sd = sd if isinstance(sd, dict) else checkpoint
    own = model.state_dict()
    loaded, skipped = {}, set()
    for key, value in sd.items():
        if not torch.is_tensor(value):
            continue
        name = strip(key, own)
        if name is None:
            raise KeyError(key)
        if value.shape == own[name].shape:
            loaded[name] = value
        else:
            skipped.add(name)
    merged = {k: loaded.get(k, v) for k, v in own.items()}
    model.load_state_dict(merged, strict=True)
    return LoadReport(loaded=list(loaded), skipped=list(skipped), missing=[k for k in own if k not in loaded])
'''
