"""Scripts and switches to eval mode but never freezes: every parameter is still there."""
CELL = "freeze_for_inference"
FAILS = ["test_freeze_no_parameters"]
SOURCE = '''
def freeze_for_inference(module: nn.Module) -> torch.jit.ScriptModule:
    """Return `module` scripted, in eval mode, and frozen (parameters folded into constants)."""
    scripted = torch.jit.script(module)
    scripted.eval()
    return scripted
'''
