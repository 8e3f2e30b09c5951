"""Uses torch's consume_prefix_in_state_dict_if_present on a copy, an explicit shape filter, then load_state_dict(strict=False); unsorted report."""
CELL = "load_checkpoint_flexible"
SOURCE = '''
def load_checkpoint_flexible(model: nn.Module, checkpoint: dict) -> LoadReport:
    """Load a plain / DDP / Lightning / different-head checkpoint into `model`; return what was loaded, skipped, missing."""
    from collections import OrderedDict
    from torch.nn.modules.utils import consume_prefix_in_state_dict_if_present
    sd = checkpoint["state_dict"] if isinstance(checkpoint.get("state_dict"), dict) else checkpoint
    sd = OrderedDict((k, v) for k, v in sd.items() if isinstance(v, torch.Tensor))
    own = model.state_dict()
    for _ in range(4):
        if all(k in own for k in sd):
            break
        for prefix in ("module.", "model."):
            if any(k.startswith(prefix) and k not in own for k in sd):
                consume_prefix_in_state_dict_if_present(sd, prefix)
    unknown = [k for k in sd if k not in own]
    if unknown:
        raise KeyError(f"unknown keys: {unknown}")
    skipped = [k for k in sd if sd[k].shape != own[k].shape]
    keep = {k: v for k, v in sd.items() if k not in skipped}
    model.load_state_dict(keep, strict=False)
    return LoadReport(loaded=list(keep), skipped=skipped, missing=[k for k in own if k not in keep])
'''
