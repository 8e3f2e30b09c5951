"""Assumes every output is a tensor: a module returning a tuple (nn.LSTM) makes the hook raise."""
KIND = "edge-case"
NOTE = "Not every submodule returns a tensor (nn.LSTM returns a tuple): a hook that reads .shape on every output raises. Outputs that are not tensors are to be left out."
CELL = "record_activations"
FAILS = ["test_record_activations_shapes", "test_record_activations_repeated"]
SOURCE = '''
def record_activations(model, x):
    shapes, handles = {}, []
    try:
        for name, module in model.named_modules():
            if name:
                handles.append(module.register_forward_hook(
                    lambda m, i, o, name=name: shapes.__setitem__(name, o.shape)))
        model(x)
    finally:
        for h in handles:
            h.remove()
    return shapes
'''
