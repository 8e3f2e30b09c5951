"""Catches the model's exception and returns what it recorded so far: the caller never learns forward failed."""
KIND = "contract"
NOTE = "Catching the model's exception and returning what was recorded hides the failure: the caller never learns the forward pass failed. Clean up, but let the exception reach the caller."
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
    try:
        model(x)
    except Exception:
        pass
    finally:
        for h in handles:
            h.remove()
    return shapes
'''
