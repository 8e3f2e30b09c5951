"""Enters the mode with __enter__ and leaves it with __exit__ after fn: an exception from fn leaves it active."""
KIND = "edge-case"
NOTE = "A mode entered by hand stays on the stack when fn raises before the matching exit: every later op in the program is then intercepted. A with block (or try/finally) leaves it on every path."
CELL = "matmul_flops"
FAILS = ["test_matmul_flops_fresh"]
SOURCE = '''
from torch.utils._python_dispatch import TorchDispatchMode


def matmul_flops(fn, *args):
    totals = {}
    ops = (torch.ops.aten.mm.default, torch.ops.aten.addmm.default, torch.ops.aten.bmm.default)

    class Counter(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if func in ops:
                a, b = args[-2], args[-1]
                totals[str(func)] = totals.get(str(func), 0) + 2 * a.numel() * b.shape[-1]
            return func(*args, **(kwargs or {}))

    mode = Counter()
    mode.__enter__()
    fn(*args)
    mode.__exit__(None, None, None)
    return totals
'''
