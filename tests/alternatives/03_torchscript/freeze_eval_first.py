"""eval() on the eager module first, then script, then freeze in one expression."""
CELL = "freeze_for_inference"
SOURCE = '''
def freeze_for_inference(module: nn.Module) -> torch.jit.ScriptModule:
    """Return `module` scripted, in eval mode, and frozen (parameters folded into constants)."""
    return torch.jit.freeze(torch.jit.script(module.eval()))
'''
