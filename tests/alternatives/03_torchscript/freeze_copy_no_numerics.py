"""Scripts a deep copy, switches it with train(False), freezes with preserved_attrs=[*keep] and optimize_numerics=False."""
CELL = "freeze_for_inference"
SOURCE = '''
from typing import Sequence


def freeze_for_inference(module: nn.Module, keep: Sequence[str] = ()) -> torch.jit.ScriptModule:
    """Return `module` scripted, in eval mode, and frozen, with the names in `keep` preserved."""
    scripted = torch.jit.script(copy.deepcopy(module))
    scripted.train(False)
    return torch.jit.freeze(scripted, preserved_attrs=[*keep], optimize_numerics=False)
'''
