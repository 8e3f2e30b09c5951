"""Selects ops with `"mm" in str(func)` (as the section 1.8 demo counted them): also counts baddbmm, addbmm, addmm_, _addmm_activation, ... (written blind, from the release alone)."""
CELL = 'matmul_flops'
KIND = 'wrong-value'
NOTE = "A substring test on the op's name ('mm' in str(func)) also matches addmm_, mm.out, baddbmm and more: count exactly the three overloads asked for, by comparing the op objects."
FAILS = ['test_matmul_flops_values']
SOURCE = '''
from torch.utils._python_dispatch import TorchDispatchMode


class MatmulCounter(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.counts = {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        name = str(func)
        if "mm" in name:
            # the two matrices are always the last two tensor arguments (addmm has its bias first)
            a, b = [x for x in args if isinstance(x, torch.Tensor)][-2:]
            flops = 2 * a.shape[-2] * a.shape[-1] * b.shape[-1]
            if a.dim() == 3:
                flops *= a.shape[0]
            self.counts[name] = self.counts.get(name, 0) + flops
        return out


def matmul_flops(fn, *args) -> dict[str, int]:
    """Run fn(*args) once; return {aten overload name: FLOPs} of the mm, addmm and bmm ops it ran (forward and backward)."""
    counter = MatmulCounter()
    with counter:
        fn(*args)
    return counter.counts
'''
