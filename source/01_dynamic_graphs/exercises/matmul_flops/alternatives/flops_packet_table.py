"""Selects ops by overload packet and overload name, one formula per packet in a table, a defaultdict."""
CELL = "matmul_flops"
SOURCE = '''
from collections import defaultdict
from torch.utils._python_dispatch import TorchDispatchMode

aten = torch.ops.aten
FORMULAS = {
    aten.mm: lambda a, b: 2 * a.shape[0] * a.shape[1] * b.shape[1],
    aten.addmm: lambda bias, a, b: 2 * a.shape[0] * a.shape[1] * b.shape[1],
    aten.bmm: lambda a, b: 2 * a.shape[0] * a.shape[1] * a.shape[2] * b.shape[2],
}


def matmul_flops(fn, *args):
    counts = defaultdict(int)

    class Flops(TorchDispatchMode):
        def __torch_dispatch__(self, op, types, args=(), kwargs=None):
            formula = FORMULAS.get(op.overloadpacket)
            if formula is not None and op._overloadname == "default":
                counts[str(op)] += int(formula(*args[:3]))
            return op(*args, **(kwargs or {}))

    with Flops():
        fn(*args)
    return dict(counts)
'''
