"""functools.partial hooks, an ExitStack to remove them, a set of seen modules instead of named_modules' dedup."""
CELL = "record_activations"
SOURCE = '''
def record_activations(model, x):
    import contextlib
    import functools

    result = {}

    def store(name, module, inputs, output):
        if type(output) is torch.Tensor or isinstance(output, torch.Tensor):
            result[name] = torch.Size(output.shape)

    seen = set()
    with contextlib.ExitStack() as stack:
        for name, module in model.named_modules(remove_duplicate=False):
            if not name or id(module) in seen:
                continue
            seen.add(id(module))
            handle = module.register_forward_hook(functools.partial(store, name))
            stack.callback(handle.remove)
        model(x)
    return result
'''
