"""Re-implements peaks vectorised with >= / <= (plateaus count as peaks) instead of legacy_peaks' strict comparisons. (written blind, from the release alone)."""
CELL = 'register_peaks_op'
KIND = 'wrong-value'
NOTE = "Peaks are strict local maxima: a value equal to a neighbour is not one. Comparisons with >= count plateaus, so the op returns indices the legacy function does not."
FAILS = ['test_peaks_compiled', 'test_peaks_opcheck', 'test_peaks_values']
SOURCE = '''
def register_peaks_op(name: str = "ch6::peaks"):
    """Register legacy_peaks as the custom op `name`, with a fake whose output size is data-dependent; return it."""
    @torch.library.custom_op(name, mutates_args=())
    def op(x: torch.Tensor) -> torch.Tensor:
        if x.dim() != 1:
            raise ValueError("expects a 1-D signal")
        mid = x[1:-1]
        is_peak = (mid >= x[:-2]) & (mid >= x[2:])          # vectorised: no Python loop
        return (torch.nonzero(is_peak).flatten() + 1).to(torch.int64)

    @op.register_fake
    def _(x):
        return x.new_empty((torch.library.get_ctx().new_dynamic_size(),), dtype=torch.int64)

    return op
'''
