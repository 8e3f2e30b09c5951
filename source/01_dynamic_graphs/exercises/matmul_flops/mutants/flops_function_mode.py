"""Counts in a TorchFunctionMode: sees torch.matmul / F.linear by name, never the aten ops nor the backward pass."""
KIND = "contract"
NOTE = "A TorchFunctionMode works above autograd on the calls as written: it sees linear, not addmm, and nothing that backward() runs. Counting every product a step computes needs the dispatch level."
CELL = "matmul_flops"
FAILS = ["test_matmul_flops_values", "test_matmul_flops_backward", "test_matmul_flops_own_mode"]
SOURCE = '''
from torch.overrides import TorchFunctionMode


def matmul_flops(fn, *args):
    totals = {}

    class Counter(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            name = getattr(func, "__name__", "")
            if name in ("mm", "matmul", "__matmul__", "bmm") and len(args) == 2:
                a, b = args
                key = "aten.bmm.default" if a.dim() == 3 else "aten.mm.default"
                totals[key] = totals.get(key, 0) + 2 * a.numel() * b.shape[-1]
            elif name == "linear":
                x, w = args[0], args[1]
                key = "aten.addmm.default" if (len(args) > 2 and args[2] is not None) else "aten.mm.default"
                totals[key] = totals.get(key, 0) + 2 * x.numel() * w.shape[0]
            return func(*args, **(kwargs or {}))

    with Counter():
        fn(*args)
    return totals
'''
