"""Wraps the shipped FlopCounterMode and keeps its mm/addmm/bmm entries: a forbidden tool, and no mode of its own. (written blind, from the release alone)."""
CELL = 'matmul_flops'
KIND = 'contract'
NOTE = "Wrapping FlopCounterMode answers a different question: it is the library's counter, not your own mode, and it folds other overloads and ops into its counts. The exercise is to write the hook yourself."
FAILS = ['test_matmul_flops_own_mode', 'test_matmul_flops_values']
SOURCE = '''
from torch.utils.flop_counter import FlopCounterMode

_KEEP = {"aten.mm", "aten.addmm", "aten.bmm"}


def matmul_flops(fn, *args) -> dict[str, int]:
    """Run fn(*args) once; return {aten overload name: FLOPs} of the mm, addmm and bmm ops it ran (forward and backward)."""
    counter = FlopCounterMode(display=False)      # a TorchDispatchMode underneath (section 1.8)
    with counter:
        fn(*args)
    per_packet = counter.get_flop_counts().get("Global", {})
    return {f"{packet}.default": int(n) for packet, n in per_packet.items() if str(packet) in _KEEP}
'''
