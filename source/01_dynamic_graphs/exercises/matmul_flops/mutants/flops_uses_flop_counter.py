"""Uses FlopCounterMode and renames its keys, which the statement rules out."""
KIND = "contract"
NOTE = "FlopCounterMode gives these totals, which is why the exercise rules it out: the point is to write the dispatch mode and the formula yourself. Keep FlopCounterMode for checking your answer."
CELL = "matmul_flops"
FAILS = ["test_matmul_flops_own_mode", "test_matmul_flops_values"]
SOURCE = '''
from torch.utils.flop_counter import FlopCounterMode


def matmul_flops(fn, *args):
    counter = FlopCounterMode(display=False)
    with counter:
        fn(*args)
    keep = ("aten.mm", "aten.addmm", "aten.bmm")
    return {f"{op}.default": n for op, n in counter.get_flop_counts().get("Global", {}).items() if str(op) in keep}
'''
