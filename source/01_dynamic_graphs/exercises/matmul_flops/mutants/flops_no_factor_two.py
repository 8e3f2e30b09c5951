"""Counts M * K * N multiply-adds per product instead of 2 * M * K * N FLOPs."""
KIND = "wrong-value"
NOTE = "A product of (M, K) and (K, N) does M*K*N multiply-adds, and each is two floating-point operations: a multiply and an add. FlopCounterMode's convention, and the statement's, is 2*M*K*N."
CELL = "matmul_flops"
FAILS = ["test_matmul_flops_values", "test_matmul_flops_backward", "test_matmul_flops_own_mode", "test_matmul_flops_fresh"]
SOURCE = '''
from torch.utils._python_dispatch import TorchDispatchMode


def matmul_flops(fn, *args):
    totals = {}
    ops = (torch.ops.aten.mm.default, torch.ops.aten.addmm.default, torch.ops.aten.bmm.default)

    class Counter(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if func in ops:
                a, b = args[-2], args[-1]
                totals[str(func)] = totals.get(str(func), 0) + a.numel() * b.shape[-1]
            return func(*args, **(kwargs or {}))

    with Counter():
        fn(*args)
    return totals
'''
