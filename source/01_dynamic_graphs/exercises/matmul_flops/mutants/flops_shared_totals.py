"""Keeps the totals in one dict made once, at definition time: every call adds to the last one's counts."""
KIND = "state"
NOTE = "A dict created once, outside the function (or as a default argument), is shared by every call: the second call returns the first call's FLOPs plus its own. Each call needs a fresh dict of its own."
CELL = "matmul_flops"
FAILS = ["test_matmul_flops_values", "test_matmul_flops_backward", "test_matmul_flops_own_mode", "test_matmul_flops_fresh"]
SOURCE = '''
from torch.utils._python_dispatch import TorchDispatchMode

_TOTALS = {}


class _Counter(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func in (torch.ops.aten.mm.default, torch.ops.aten.addmm.default, torch.ops.aten.bmm.default):
            a, b = args[-2], args[-1]
            _TOTALS[str(func)] = _TOTALS.get(str(func), 0) + 2 * a.numel() * b.shape[-1]
        return func(*args, **(kwargs or {}))


def matmul_flops(fn, *args):
    with _Counter():
        fn(*args)
    return _TOTALS
'''
