"""Freezes without switching to eval mode: torch.jit.freeze refuses a module in train mode."""
CELL = "freeze_for_inference"
FAILS = ["test_freeze_outputs", "test_freeze_no_parameters", "test_freeze_preserved", "test_freeze_roundtrip"]
SOURCE = '''
from typing import Sequence


def freeze_for_inference(module: nn.Module, keep: Sequence[str] = ()) -> torch.jit.ScriptModule:
    """Return `module` scripted, in eval mode, and frozen, with the names in `keep` preserved."""
    return torch.jit.freeze(torch.jit.script(module), preserved_attrs=list(keep))
'''
