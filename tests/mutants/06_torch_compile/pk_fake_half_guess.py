"""The fake guesses the most peaks a signal can have, (n - 1) // 2: right only for alternating signals."""
KIND = "overfit"
NOTE = "The number of peaks depends on the values, not on the input's shape: no formula in the input's length describes it, so the fake needs a size that only the data decides."
CELL = "register_peaks_op"
FAILS = ["test_peaks_opcheck", "test_peaks_compiled"]
SOURCE = '''
def register_peaks_op(name: str = "ch6::peaks"):
    """Register legacy_peaks as the custom op `name`, with a fake whose output size is data-dependent; return it."""
    @torch.library.custom_op(name, mutates_args=())
    def peaks_op(x: torch.Tensor) -> torch.Tensor:
        return legacy_peaks(x)

    @peaks_op.register_fake
    def _(x):
        return x.new_empty(((x.shape[0] - 1) // 2,), dtype=torch.int64)

    return peaks_op
'''
