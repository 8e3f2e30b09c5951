"""A mutable default argument as the result dict: shapes from earlier calls leak into later ones."""
KIND = "state"
NOTE = "A result dict that outlives the call (a module-level dict, or a mutable default argument) is shared by every call: one call's results leak into, or are overwritten by, later calls."
CELL = "record_activations"
FAILS = ["test_record_activations_shapes", "test_record_activations_repeated", "test_record_activations_fresh"]
SOURCE = '''
def record_activations(model, x, shapes={}):
    handles = []
    try:
        for name, module in model.named_modules():
            if name:
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
