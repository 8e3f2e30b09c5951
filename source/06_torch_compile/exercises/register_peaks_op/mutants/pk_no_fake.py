"""Registers the op without a fake implementation: Dynamo cannot trace it and opcheck fails."""
KIND = "contract"
NOTE = "A custom op is opaque to the compiler: without a fake implementation, Dynamo and opcheck cannot know the output's shape, dtype and device, so tracing through the op fails."
CELL = "register_peaks_op"
FAILS = ["test_peaks_opcheck", "test_peaks_compiled"]
SOURCE = '''
def register_peaks_op(name: str = "ch6::peaks"):
    """Register legacy_peaks as the custom op `name`, with a fake whose output size is data-dependent; return it."""
    @torch.library.custom_op(name, mutates_args=())
    def peaks_op(x: torch.Tensor) -> torch.Tensor:
        return legacy_peaks(x)

    return peaks_op
'''
