"""Cleans up by clearing every module's _forward_hooks: the user's own hooks vanish too."""
KIND = "mutation"
NOTE = "Clearing a module's forward-hook dict also wipes hooks the caller had registered; remove only the hooks you added, through the handles that registering them returned."
CELL = "record_activations"
FAILS = ["test_record_activations_cleanup"]
SOURCE = '''
def record_activations(model, x):
    shapes = {}
    try:
        for name, module in model.named_modules():
            if name:
                def hook(m, i, o, name=name):
                    if isinstance(o, torch.Tensor):
                        shapes[name] = o.shape
                module.register_forward_hook(hook)
        model(x)
    finally:
        for module in model.modules():
            module._forward_hooks.clear()
    return shapes
'''
