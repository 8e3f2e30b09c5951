"""Runs fn once to see which ops it runs and again under the mode to count: fn runs twice."""
KIND = "contract"
NOTE = "Running fn a second time doubles its side effects: a backward() adds its gradients into .grad twice and an optimiser would step twice. A mode counts while the one call runs; no dry run is needed."
CELL = "matmul_flops"
FAILS = ["test_matmul_flops_own_mode", "test_matmul_flops_fresh"]
SOURCE = '''
from torch.utils._python_dispatch import TorchDispatchMode


def matmul_flops(fn, *args):
    fn(*args)
    totals = {}

    class Counter(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if func in (torch.ops.aten.mm.default, torch.ops.aten.addmm.default, torch.ops.aten.bmm.default):
                a, b = args[-2], args[-1]
                totals[str(func)] = totals.get(str(func), 0) + 2 * a.numel() * b.shape[-1]
            return func(*args, **(kwargs or {}))

    with Counter():
        fn(*args)
    return totals
'''
