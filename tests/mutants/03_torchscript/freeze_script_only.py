"""Scripts and switches to eval mode but never freezes: every parameter is still there."""
CELL = "freeze_for_inference"
FAILS = ["test_freeze_no_parameters", "test_freeze_preserved"]
SOURCE = '''
from typing import Sequence


def freeze_for_inference(module: nn.Module, keep: Sequence[str] = ()) -> torch.jit.ScriptModule:
    """Return `module` scripted, in eval mode, and frozen, with the names in `keep` preserved."""
    scripted = torch.jit.script(module)
    scripted.eval()
    return scripted
'''
