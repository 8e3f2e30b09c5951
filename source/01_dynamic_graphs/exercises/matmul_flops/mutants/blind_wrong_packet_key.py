"""Matches the overload *packet* and keys it as packet + ".default" (like the visible test builds its expectation): aten.mm.out (torch.mm(a, b, out=c)) is counted, under the wrong key. (written blind, from the release alone)."""
CELL = 'matmul_flops'
KIND = 'contract'
NOTE = 'An overload packet (aten.mm) groups several overloads (aten.mm.default, aten.mm.out): matching the packet counts mm(out=...) too, under a key naming an overload that never ran. Compare with the exact overload.'
FAILS = ['test_matmul_flops_values']
SOURCE = '''
from torch.utils._python_dispatch import TorchDispatchMode

aten = torch.ops.aten


def _mm(a, b, *rest):
    return 2 * a.shape[0] * a.shape[1] * b.shape[1]


def _addmm(bias, a, b, *rest):
    return _mm(a, b)


def _bmm(a, b, *rest):
    return a.shape[0] * _mm(a[0], b[0])


FORMULAS = {aten.mm: _mm, aten.addmm: _addmm, aten.bmm: _bmm}


class CountMatmuls(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.total = {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        packet = func.overloadpacket
        if packet in FORMULAS:
            key = f"{packet}.default"
            self.total[key] = self.total.get(key, 0) + FORMULAS[packet](*args)
        return out


def matmul_flops(fn, *args) -> dict[str, int]:
    """Run fn(*args) once; return {aten overload name: FLOPs} of the mm, addmm and bmm ops it ran (forward and backward)."""
    mode = CountMatmuls()
    with mode:
        fn(*args)
    return mode.total
'''
