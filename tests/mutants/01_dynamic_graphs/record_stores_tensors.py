"""Stores the output tensors instead of their shapes."""
CELL = "record_activations"
FAILS = ["test_record_activations_shapes", "test_record_activations_repeated", "test_record_activations_fresh"]
SOURCE = '''
def record_activations(model, x):
    outs, handles = {}, []
    try:
        for name, module in model.named_modules():
            if name:
                handles.append(module.register_forward_hook(
                    lambda m, i, o, name=name: outs.__setitem__(name, o)))
        model(x)
    finally:
        for h in handles:
            h.remove()
    return outs
'''
