"""torch.jit.optimize_for_inference (which freezes) on a scripted deep copy in eval mode."""
CELL = "freeze_for_inference"
SOURCE = '''
def freeze_for_inference(module: nn.Module) -> torch.jit.ScriptModule:
    """Return `module` scripted, in eval mode, and frozen (parameters folded into constants)."""
    return torch.jit.optimize_for_inference(torch.jit.script(copy.deepcopy(module).eval()))
'''
