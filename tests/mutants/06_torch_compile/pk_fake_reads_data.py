"""The fake calls legacy_peaks on the fake tensor, as if it had values."""
KIND = "contract"
NOTE = "Fake tensors have shape, dtype and device but no values: the fake cannot run the real computation; it can only describe the output."
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
        return legacy_peaks(x)

    return peaks_op
'''
