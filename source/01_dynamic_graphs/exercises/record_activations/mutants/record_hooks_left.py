"""Never removes its hooks: they stay registered and keep firing on every later forward pass."""
KIND = "state"
NOTE = "A forward hook stays registered until its handle is removed: hooks that are never removed keep firing on every later forward pass of the model."
CELL = "record_activations"
FAILS = ["test_record_activations_cleanup"]
SOURCE = '''
def record_activations(model, x):
    shapes = {}
    for name, module in model.named_modules():
        if name:
            def hook(m, i, o, name=name):
                if isinstance(o, torch.Tensor):
                    shapes[name] = o.shape
            module.register_forward_hook(hook)
    model(x)
    return shapes
'''
