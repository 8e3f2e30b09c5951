"""The fake allocates its output on the default device (torch.empty), not on x's device: wrong metadata for CUDA inputs. (written blind, from the release alone)."""
CELL = 'register_peaks_op'
KIND = 'contract'
NOTE = "The fake must describe the output on the input's device: an empty tensor on the default device is wrong metadata for a CUDA signal."
FAILS = ['test_peaks_opcheck']
SOURCE = '''
def register_peaks_op(name: str = "ch6::peaks"):
    """Register legacy_peaks as the custom op `name`, with a fake whose output size is data-dependent; return it."""
    @torch.library.custom_op(name, mutates_args=())
    def op(x: torch.Tensor) -> torch.Tensor:
        return legacy_peaks(x)

    @op.register_fake
    def _(x):
        n = torch.library.get_ctx().new_dynamic_size()
        return torch.empty(n, dtype=torch.int64)

    return op
'''
