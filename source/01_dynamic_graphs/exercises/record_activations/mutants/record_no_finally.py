"""Removes its hooks after model(x), but not in finally: a forward that raises leaves them behind."""
KIND = "edge-case"
NOTE = "Cleanup that runs only after the forward pass returns is skipped when the model raises, leaving the hooks registered; hook removal must happen whether or not the model fails."
CELL = "record_activations"
FAILS = ["test_record_activations_cleanup"]
SOURCE = '''
def record_activations(model, x):
    shapes, handles = {}, []
    for name, module in model.named_modules():
        if name:
            def hook(m, i, o, name=name):
                if isinstance(o, torch.Tensor):
                    shapes[name] = o.shape
            handles.append(module.register_forward_hook(hook))
    model(x)
    for h in handles:
        h.remove()
    return shapes
'''
