"""Hooks only the direct children (named_children): nested submodules are missing."""
KIND = "wrong-value"
NOTE = "named_children() yields only the direct children; nested submodules, which named_modules() also lists, get no hook and are missing from the result."
CELL = "record_activations"
FAILS = ["test_record_activations_shapes", "test_record_activations_fresh"]
SOURCE = '''
def record_activations(model, x):
    shapes, handles = {}, []
    try:
        for name, module in model.named_children():
            def hook(m, i, o, name=name):
                if isinstance(o, torch.Tensor):
                    shapes[name] = o.shape
            handles.append(module.register_forward_hook(hook))
        model(x)
    finally:
        for h in handles:
            h.remove()
    return shapes
'''
