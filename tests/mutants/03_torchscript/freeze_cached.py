"""Caches the frozen module per class name ("freeze once"): later modules of the same class get the first one."""
CELL = "freeze_for_inference"
FAILS = ["test_freeze_outputs", "test_freeze_preserved", "test_freeze_roundtrip"]
SOURCE = '''
from typing import Sequence


def freeze_for_inference(module: nn.Module, keep: Sequence[str] = ()) -> torch.jit.ScriptModule:
    """Return `module` scripted, in eval mode, and frozen, with the names in `keep` preserved."""
    global _FROZEN_CACHE
    try:
        _FROZEN_CACHE
    except NameError:
        _FROZEN_CACHE = {}
    name = type(module).__name__
    if name not in _FROZEN_CACHE:
        _FROZEN_CACHE[name] = torch.jit.freeze(torch.jit.script(module).eval(), preserved_attrs=list(keep))
    return _FROZEN_CACHE[name]
'''
