"""The fake uses new_dynamic_size but keeps the input's float dtype instead of int64."""
KIND = "edge-case"
NOTE = "The fake must describe the real output exactly: the op returns int64 indices, so a fake with the input's float dtype gives the wrong metadata."
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
        return x.new_empty((torch.library.get_ctx().new_dynamic_size(),))

    return peaks_op
'''
