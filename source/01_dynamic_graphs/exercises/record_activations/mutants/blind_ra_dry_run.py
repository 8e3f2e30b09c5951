"""Runs model(x) once WITHOUT hooks first (so a failing model raises before any hook exists), then again with hooks: two forward passes (BatchNorm stats updated twice, side effects doubled). (written blind, from the release alone)."""
CELL = 'record_activations'
KIND = 'contract'
NOTE = "The model must run exactly once: an extra forward pass without hooks is still a forward pass, so its side effects (BatchNorm running statistics, anything counting calls) happen twice."
FAILS = ['test_record_activations_cleanup', 'test_record_activations_fresh']
SOURCE = '''
def record_activations(model: nn.Module, x: torch.Tensor) -> dict[str, torch.Size]:
    """Run model(x) once with forward hooks; return {submodule name: output shape}, hooks removed."""
    model(x)                                   # dry run: if the model raises, no hook has been added yet
    result = {}
    handles = []
    for name, module in model.named_modules():
        if name == "":
            continue
        def hook(mod, inputs, out, name=name):
            if isinstance(out, torch.Tensor):
                result[name] = out.shape
        handles.append(module.register_forward_hook(hook))
    model(x)
    for h in handles:
        h.remove()
    return result
'''
