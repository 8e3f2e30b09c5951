"""Strips 'model.' then 'module.' once each, in that order: 'model.module.' works, 'module.model.' (a DDP-wrapped LightningModule) does not. (written blind, from the release alone)."""
CELL = 'load_checkpoint_flexible'
KIND = 'edge-case'
NOTE = "Wrapper prefixes can nest in any order and number (a DDP-wrapped LightningModule gives module.model.): stripping each prefix once, in a fixed order, misses some combinations."
FAILS = ['test_load_unseen_formats']
SOURCE = '''
def load_checkpoint_flexible(model: nn.Module, checkpoint: dict) -> LoadReport:
    """Load a plain / DDP / Lightning / different-head checkpoint into `model`; return what was loaded, skipped, missing."""
    sd = checkpoint["state_dict"] if isinstance(checkpoint.get("state_dict"), dict) else checkpoint
    own = model.state_dict()
    plan, skipped = {}, []
    for key, value in sd.items():
        if not torch.is_tensor(value):
            continue
        name = key
        for prefix in ("model.", "module."):        # Lightning's attribute, then DDP's wrapper
            if name not in own and name.startswith(prefix):
                name = name[len(prefix):]
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
