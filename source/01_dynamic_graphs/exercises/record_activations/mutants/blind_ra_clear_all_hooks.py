"""Cleans up with module._forward_hooks.clear() on every submodule: hooks the caller had put on the model are wiped too. (written blind, from the release alone)."""
CELL = 'record_activations'
KIND = 'mutation'
NOTE = "Clearing a module's forward-hook dict also wipes hooks the caller had registered; remove only the hooks you added, through the handles that registering them returned."
FAILS = ['test_record_activations_cleanup']
SOURCE = '''
def record_activations(model: nn.Module, x: torch.Tensor) -> dict[str, torch.Size]:
    """Run model(x) once with forward hooks; return {submodule name: output shape}, hooks removed."""
    result = {}
    for name, module in model.named_modules():
        if name == "":
            continue
        def hook(mod, inputs, out, name=name):
            if isinstance(out, torch.Tensor):
                result[name] = out.shape
        module.register_forward_hook(hook)
    try:
        model(x)
    finally:
        for module in model.modules():
            module._forward_hooks.clear()          # make sure no hook is left behind
    return result
'''
