"""Correct: one global forward hook (register_module_forward_hook) with a module -> first-name map, removed in finally. (written blind, from the release alone)."""
CELL = 'record_activations'
SOURCE = '''
def record_activations(model: nn.Module, x: torch.Tensor) -> dict[str, torch.Size]:
    """Run model(x) once with forward hooks; return {submodule name: output shape}, hooks removed."""
    names = {}
    for name, module in model.named_modules():       # named_modules() already yields each module once, first name
        if name:
            names.setdefault(id(module), (module, name))
    shapes = {}

    def hook(module, inputs, out):
        entry = names.get(id(module))
        if entry is not None and entry[0] is module and isinstance(out, torch.Tensor):
            shapes[entry[1]] = out.shape

    handle = torch.nn.modules.module.register_module_forward_hook(hook)
    try:
        model(x)
    finally:
        handle.remove()
    return shapes
'''
