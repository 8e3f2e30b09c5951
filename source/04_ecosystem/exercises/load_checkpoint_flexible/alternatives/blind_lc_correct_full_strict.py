"""Correct: plan every key against a fresh copy of model.state_dict(), then one strict load_state_dict of the completed dict. (written blind, from the release alone)."""
CELL = 'load_checkpoint_flexible'
SOURCE = '''
def load_checkpoint_flexible(model: nn.Module, checkpoint: dict) -> LoadReport:
    """Load a plain / DDP / Lightning / different-head checkpoint into `model`; return what was loaded, skipped, missing."""
    inner = checkpoint.get("state_dict") if isinstance(checkpoint, dict) else None
    source = inner if isinstance(inner, dict) else checkpoint
    target = model.state_dict()          # an OrderedDict with _metadata: every name and shape the model expects
    loaded, skipped = [], []
    for key, value in source.items():    # pass 1: decide everything, touch nothing
        if not isinstance(value, torch.Tensor):
            continue
        name = key
        while name not in target:
            head, dot, rest = name.partition(".")
            if dot and head in ("module", "model"):
                name = rest
            else:
                raise KeyError(f"checkpoint key {key!r} (as {name!r}) names no entry of the model")
        if tuple(value.shape) != tuple(target[name].shape):
            skipped.append(name)
            continue
        target[name] = value             # replaces the entry in our copy, never in `checkpoint`
        loaded.append(name)
    model.load_state_dict(target, strict=True)   # pass 2: every key present, values copied (copy_, with casting)
    done = set(loaded)
    return LoadReport(loaded=loaded, skipped=skipped, missing=[k for k in model.state_dict() if k not in done])
'''
