"""Never removes its hooks: they keep firing on every later forward pass."""
CELL = "record_activations"
FAILS = ["test_record_activations_cleanup"]
SOURCE = '''
def record_activations(model, x):
    shapes = {}
    for name, module in model.named_modules():
        if name:
            module.register_forward_hook(lambda m, i, o, name=name: shapes.__setitem__(name, o.shape))
    model(x)
    return shapes
'''
