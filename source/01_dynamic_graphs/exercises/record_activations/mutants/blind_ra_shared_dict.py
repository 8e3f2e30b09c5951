"""Reuses one module-level dict, cleared at the start of each call: every call returns the same object, so an earlier result changes under the caller. (written blind, from the release alone)."""
CELL = 'record_activations'
KIND = 'state'
NOTE = "A result dict that outlives the call (a module-level dict, or a mutable default argument) is shared by every call: one call's results leak into, or are overwritten by, later calls."
FAILS = ['test_record_activations_fresh', 'test_record_activations_repeated', 'test_record_activations_shapes']
SOURCE = '''
_SHAPES: dict = {}


def record_activations(model: nn.Module, x: torch.Tensor) -> dict[str, torch.Size]:
    """Run model(x) once with forward hooks; return {submodule name: output shape}, hooks removed."""
    _SHAPES.clear()                              # forget the previous call
    handles = []
    for name, module in model.named_modules():
        if name == "":
            continue
        def hook(mod, inputs, out, name=name):
            if isinstance(out, torch.Tensor):
                _SHAPES[name] = out.shape
        handles.append(module.register_forward_hook(hook))
    try:
        model(x)
    finally:
        for h in handles:
            h.remove()
    return _SHAPES
'''
