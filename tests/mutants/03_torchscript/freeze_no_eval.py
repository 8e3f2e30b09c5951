"""Freezes without switching to eval mode: torch.jit.freeze refuses a module in train mode."""
CELL = "freeze_for_inference"
FAILS = ["test_freeze_outputs", "test_freeze_no_parameters", "test_freeze_roundtrip"]
SOURCE = '''
def freeze_for_inference(module: nn.Module) -> torch.jit.ScriptModule:
    """Return `module` scripted, in eval mode, and frozen (parameters folded into constants)."""
    return torch.jit.freeze(torch.jit.script(module))
'''
