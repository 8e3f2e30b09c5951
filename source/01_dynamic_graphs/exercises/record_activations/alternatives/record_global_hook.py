"""One global forward hook (register_module_forward_hook) and a module-to-name map."""
CELL = "record_activations"
SOURCE = '''
def record_activations(model, x):
    names = {id(m): n for n, m in model.named_modules() if n}
    shapes = {}

    def hook(module, inputs, output):
        name = names.get(id(module))
        if name is not None and isinstance(output, torch.Tensor):
            shapes[name] = output.shape

    handle = torch.nn.modules.module.register_module_forward_hook(hook)
    try:
        model(x)
    finally:
        handle.remove()
    return shapes
'''
