"""Traces instead of scripting, on an example sized from the first Linear: control flow is frozen, conv nets fail."""
CELL = "freeze_for_inference"
FAILS = ["test_freeze_outputs", "test_freeze_preserved", "test_freeze_roundtrip"]
SOURCE = '''
from typing import Sequence


def freeze_for_inference(module: nn.Module, keep: Sequence[str] = ()) -> torch.jit.ScriptModule:
    """Return `module` scripted, in eval mode, and frozen, with the names in `keep` preserved."""
    module = module.eval()
    first = next(m for m in module.modules() if isinstance(m, nn.Linear))
    traced = torch.jit.trace(module, torch.randn(2, first.in_features))
    return torch.jit.freeze(traced, preserved_attrs=list(keep))
'''
