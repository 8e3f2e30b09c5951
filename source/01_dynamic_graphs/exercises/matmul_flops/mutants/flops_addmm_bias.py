"""Takes the first two arguments as the matrices for every op: for addmm that is the bias and mat1."""
KIND = "wrong-value"
NOTE = "addmm(bias, mat1, mat2) takes the bias first: the product it computes is of its last two arguments. Read an op's schema before reading its arguments; mm and bmm happen to start with their matrices."
CELL = "matmul_flops"
FAILS = ["test_matmul_flops_values", "test_matmul_flops_backward", "test_matmul_flops_fresh"]
SOURCE = '''
from torch.utils._python_dispatch import TorchDispatchMode


def matmul_flops(fn, *args):
    totals = {}
    ops = (torch.ops.aten.mm.default, torch.ops.aten.addmm.default, torch.ops.aten.bmm.default)

    class Counter(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if func in ops:
                a, b = args[0], args[1]
                batch = a.shape[0] if a.dim() == 3 else 1
                totals[str(func)] = totals.get(str(func), 0) + 2 * batch * a.shape[-2] * a.shape[-1] * b.shape[-1]
            return func(*args, **(kwargs or {}))

    with Counter():
        fn(*args)
    return totals
'''
