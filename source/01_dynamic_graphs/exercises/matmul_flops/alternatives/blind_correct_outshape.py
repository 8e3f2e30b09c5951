"""Mode built per call by a factory; table keyed by overload packet (default overload only), FLOPs = 2 * out.numel() * K. (written blind, from the release alone)."""
CELL = 'matmul_flops'
SOURCE = '''
import math
from torch.utils._python_dispatch import TorchDispatchMode

# position of the left matrix in each op's schema: addmm(self=bias, mat1, mat2), mm(self, mat2), bmm(self, mat2)
_LEFT = {torch.ops.aten.mm: 0, torch.ops.aten.addmm: 1, torch.ops.aten.bmm: 0}


def matmul_flops(fn, *args) -> dict[str, int]:
    """Run fn(*args) once; return {aten overload name: FLOPs} of the mm, addmm and bmm ops it ran (forward and backward)."""
    totals = {}

    class Mode(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            result = func(*args, **(kwargs if kwargs else {}))
            left = _LEFT.get(func.overloadpacket)
            if left is not None and func._overloadname == "default":
                # every output element is a dot product of length K: K multiplies and K adds
                k = args[left].shape[-1]
                flops = 2 * math.prod(result.shape) * k
                totals[str(func)] = totals.get(str(func), 0) + flops
            return result

    with Mode():
        fn(*args)
    return totals
'''
