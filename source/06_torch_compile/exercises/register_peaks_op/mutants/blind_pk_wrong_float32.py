"""Runs legacy_peaks on x.float(): float64 neighbours that differ below float32 precision tie, and strict peaks vanish. (written blind, from the release alone)."""
CELL = 'register_peaks_op'
KIND = 'wrong-value'
NOTE = "Converting the signal to float32 changes it: float64 neighbours that differ by less than float32's precision become equal, and a strict peak among them disappears."
FAILS = ['test_peaks_values']
SOURCE = '''
def register_peaks_op(name: str = "ch6::peaks"):
    """Register legacy_peaks as the custom op `name`, with a fake whose output size is data-dependent; return it."""
    @torch.library.custom_op(name, mutates_args=())
    def op(x: torch.Tensor) -> torch.Tensor:
        return legacy_peaks(x.detach().float())               # the legacy code was written for float32 signals

    @op.register_fake
    def _(x):
        return x.new_empty((torch.library.get_ctx().new_dynamic_size(),), dtype=torch.int64)

    return op
'''
