"""eval() on the eager module first (allowed by the statement), then script and freeze with preserved_attrs."""
CELL = "freeze_for_inference"
SOURCE = '''
from typing import Sequence


def freeze_for_inference(module: nn.Module, keep: Sequence[str] = ()) -> torch.jit.ScriptModule:
    """Return `module` scripted, in eval mode, and frozen, with the names in `keep` preserved."""
    return torch.jit.freeze(torch.jit.script(module.eval()), preserved_attrs=[name for name in keep])
'''
