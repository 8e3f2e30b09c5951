"""Catches the model's exception and re-raises it as RuntimeError with context: a ValueError/TypeError from the model reaches the caller as a different type. (written blind, from the release alone)."""
CELL = 'record_activations'
KIND = 'contract'
NOTE = "Re-raising the model's exception as another type hides the original: a caller that catches the real error type no longer sees it. Clean up, but let the exception through unchanged."
FAILS = ['test_record_activations_cleanup']
SOURCE = '''
def record_activations(model: nn.Module, x: torch.Tensor) -> dict[str, torch.Size]:
    """Run model(x) once with forward hooks; return {submodule name: output shape}, hooks removed."""
    result = {}
    handles = []
    for name, module in model.named_modules():
        if name == "":
            continue
        def hook(mod, inputs, out, name=name):
            if isinstance(out, torch.Tensor):
                result[name] = out.shape
        handles.append(module.register_forward_hook(hook))
    try:
        model(x)
    except Exception as err:
        for h in handles:
            h.remove()
        raise RuntimeError(f"record_activations: the forward pass failed: {err}") from err
    for h in handles:
        h.remove()
    return result
'''
