"""Adds a key only when the op's FLOPs are positive: a 0-row batch's addmm disappears."""
KIND = "edge-case"
NOTE = "An op that ran on an empty batch still ran: the statement keys the dict by the overloads that ran, so it appears with 0. Skipping zero counts makes an empty batch look like a model without that op."
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
                flops = 2 * a.numel() * b.shape[-1]
                if flops:
                    totals[str(func)] = totals.get(str(func), 0) + flops
            return func(*args, **(kwargs or {}))

    with Counter():
        fn(*args)
    return totals
'''
