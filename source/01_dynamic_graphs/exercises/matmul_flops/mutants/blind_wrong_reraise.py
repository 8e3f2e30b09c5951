"""Catches fn's exception and raises a new one of the same type with added context: the caller gets a different exception object (and a crash for types whose constructor needs other arguments). (written blind, from the release alone)."""
CELL = 'matmul_flops'
KIND = 'contract'
NOTE = "Re-raising a new exception of the same class loses the original object (its attributes, its traceback, identity checks upstream). Let fn's exception pass through untouched: with or finally, no except."
FAILS = ['test_matmul_flops_fresh']
SOURCE = '''
from torch.utils._python_dispatch import TorchDispatchMode


class MatmulFlopMode(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.counts = {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if func is torch.ops.aten.addmm.default:
            a, b = args[1], args[2]
        elif func is torch.ops.aten.mm.default or func is torch.ops.aten.bmm.default:
            a, b = args[0], args[1]
        else:
            return out
        flops = 2 * a.shape[-2] * a.shape[-1] * b.shape[-1]
        if func is torch.ops.aten.bmm.default:
            flops *= a.shape[0]
        self.counts[str(func)] = self.counts.get(str(func), 0) + flops
        return out


def matmul_flops(fn, *args) -> dict[str, int]:
    """Run fn(*args) once; return {aten overload name: FLOPs} of the mm, addmm and bmm ops it ran (forward and backward)."""
    mode = MatmulFlopMode()
    try:
        with mode:
            fn(*args)
    except Exception as err:
        # keep the type so callers can still catch it, but say where it came from
        raise type(err)(f"matmul_flops: fn{tuple(a.shape if isinstance(a, torch.Tensor) else a for a in args)} failed: {err}") from err
    return mode.counts
'''
