"""Only adds to the dict when the FLOPs are non-zero, so a 0-row batch (or K == 0) leaves its overload out. (written blind, from the release alone)."""
CELL = 'matmul_flops'
KIND = 'edge-case'
NOTE = 'An overload that ran counts even when its FLOPs are 0 (a batch of 0 rows): the key is there with 0. Dropping zero entries, as Counter arithmetic does, loses the fact that the op ran.'
FAILS = ['test_matmul_flops_fresh']
SOURCE = '''
from collections import Counter
from torch.utils._python_dispatch import TorchDispatchMode

_MM = {torch.ops.aten.mm.default, torch.ops.aten.bmm.default}
_ADDMM = torch.ops.aten.addmm.default


class FlopMode(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.flops = Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if func in _MM or func == _ADDMM:
            a, b = (args[1], args[2]) if func == _ADDMM else (args[0], args[1])
            batch = a.shape[0] if a.dim() == 3 else 1
            self.flops[str(func)] += 2 * batch * a.shape[-2] * a.shape[-1] * b.shape[-1]
        return out


def matmul_flops(fn, *args) -> dict[str, int]:
    """Run fn(*args) once; return {aten overload name: FLOPs} of the mm, addmm and bmm ops it ran (forward and backward)."""
    with FlopMode() as mode:
        fn(*args)
    # a Counter drops nothing by itself, but +Counter() keeps positive counts only, and dict() makes it a plain dict
    return dict(+mode.flops)
'''
