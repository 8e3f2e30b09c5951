"""Uses named_modules(remove_duplicate=False): a module registered twice appears under both names."""
CELL = "record_activations"
FAILS = ["test_record_activations_repeated"]
SOURCE = '''
def record_activations(model, x):
    shapes, handles = {}, []
    try:
        for name, module in model.named_modules(remove_duplicate=False):
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
