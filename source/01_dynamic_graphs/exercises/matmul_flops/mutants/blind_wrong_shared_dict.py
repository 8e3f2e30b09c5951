"""One module-level mode whose dict is cleared and returned on every call: each call's result is the same object, overwritten by the next call (and a nested call wipes the outer count). (written blind, from the release alone)."""
CELL = 'matmul_flops'
KIND = 'state'
NOTE = 'Returning one shared dict that every call clears and refills means a result the caller kept changes under them on the next call. Build a new dict in each call and hand it over.'
FAILS = ['test_matmul_flops_fresh']
SOURCE = '''
from torch.utils._python_dispatch import TorchDispatchMode

_COUNTED = (torch.ops.aten.mm.default, torch.ops.aten.addmm.default, torch.ops.aten.bmm.default)


class _FlopCounter(TorchDispatchMode):
    flops = {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        if func in _COUNTED:
            a, b = args[-2], args[-1]
            n = 2 * a.shape[-2] * a.shape[-1] * b.shape[-1] * (a.shape[0] if a.dim() == 3 else 1)
            self.flops[str(func)] = self.flops.get(str(func), 0) + n
        return result


_MATMUL_MODE = _FlopCounter()


def matmul_flops(fn, *args) -> dict[str, int]:
    """Run fn(*args) once; return {aten overload name: FLOPs} of the mm, addmm and bmm ops it ran (forward and backward)."""
    _MATMUL_MODE.flops.clear()                 # start afresh
    with _MATMUL_MODE:
        fn(*args)
    return _MATMUL_MODE.flops
'''
