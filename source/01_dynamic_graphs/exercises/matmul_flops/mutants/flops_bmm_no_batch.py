"""Uses the 2-D formula for every op: bmm's batch dimension is dropped."""
KIND = "overfit"
NOTE = "The formula written for mm does not carry over to bmm: a batched product does B separate (M, K) @ (K, N) products, so it costs B times as much. Check each op on a case other than the one you tried."
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
                totals[str(func)] = totals.get(str(func), 0) + 2 * a.shape[-2] * a.shape[-1] * b.shape[-1]
            return func(*args, **(kwargs or {}))

    with Counter():
        fn(*args)
    return totals
'''
