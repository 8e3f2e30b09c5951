"""Enters/exits the mode by hand and cleans up only in `except Exception`: a KeyboardInterrupt/SystemExit from fn leaves the mode on the stack. (written blind, from the release alone)."""
CELL = 'matmul_flops'
KIND = 'edge-case'
NOTE = 'An except clause catches only the classes it names: KeyboardInterrupt and SystemExit are not Exceptions, so a mode entered by hand stays active. A with block (or finally) leaves it whatever fn raises.'
FAILS = ['test_matmul_flops_fresh']
SOURCE = '''
from torch.utils._python_dispatch import TorchDispatchMode

_OPS = {torch.ops.aten.mm.default: (0, 1), torch.ops.aten.addmm.default: (1, 2), torch.ops.aten.bmm.default: (0, 1)}


class MatmulFlops(TorchDispatchMode):
    def __init__(self, totals):
        super().__init__()
        self.totals = totals

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if func in _OPS:
            i, j = _OPS[func]
            a, b = args[i], args[j]
            flops = 2 * a.shape[-2] * a.shape[-1] * b.shape[-1]
            if a.ndim == 3:
                flops *= a.shape[0]
            self.totals[str(func)] = self.totals.get(str(func), 0) + flops
        return out


def matmul_flops(fn, *args) -> dict[str, int]:
    """Run fn(*args) once; return {aten overload name: FLOPs} of the mm, addmm and bmm ops it ran (forward and backward)."""
    totals = {}
    mode = MatmulFlops(totals)
    mode.__enter__()
    try:
        fn(*args)
    except Exception:
        mode.__exit__(None, None, None)   # leave the mode, then let the error through
        raise
    mode.__exit__(None, None, None)
    return totals
'''
