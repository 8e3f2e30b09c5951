"""FLOPs computed with np.prod (int64) then int(): silently wraps around past 2**63 (large shapes, e.g. on the meta device). (written blind, from the release alone)."""
CELL = 'matmul_flops'
KIND = 'wrong-value'
NOTE = 'A NumPy or torch integer has 64 bits and wraps around silently past 2**63; FLOPs of big products (or shapes on the meta device) pass it. Multiply the shape entries as Python ints, which never overflow.'
FAILS = ['test_matmul_flops_values']
SOURCE = '''
import numpy as np
from torch.utils._python_dispatch import TorchDispatchMode

WATCHED = {"aten.mm.default", "aten.addmm.default", "aten.bmm.default"}


class Flops(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.per_op = {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        res = func(*args, **(kwargs or {}))
        name = str(func)
        if name in WATCHED:
            a = args[1] if name == "aten.addmm.default" else args[0]
            # every element of the left operand meets a whole row of the right one: 2 * (B*M*K) * N
            n = 2 * np.prod(a.shape) * res.shape[-1]
            self.per_op[name] = self.per_op.get(name, 0) + int(n)
        return res


def matmul_flops(fn, *args) -> dict[str, int]:
    """Run fn(*args) once; return {aten overload name: FLOPs} of the mm, addmm and bmm ops it ran (forward and backward)."""
    with Flops() as f:
        fn(*args)
    return f.per_op
'''
