"""Registers one op at the first call and returns it for every name: later names are never registered."""
KIND = "state"
NOTE = "Each call registers a new op under the name it is given: returning the op registered first means later names are never registered and cannot be reached under torch.ops."
CELL = "register_peaks_op"
FAILS = ["test_peaks_values"]
SOURCE = '''
_PEAKS_OPS = []

def register_peaks_op(name: str = "ch6::peaks"):
    """Register legacy_peaks as the custom op `name`, with a fake whose output size is data-dependent; return it."""
    if not _PEAKS_OPS:
        @torch.library.custom_op(name, mutates_args=())
        def peaks_op(x: torch.Tensor) -> torch.Tensor:
            return legacy_peaks(x)

        @peaks_op.register_fake
        def _(x):
            return x.new_empty((torch.library.get_ctx().new_dynamic_size(),), dtype=torch.int64)

        _PEAKS_OPS.append(peaks_op)
    return _PEAKS_OPS[0]
'''
