"""Correct: low-level torch.library.define + impl("default") + register_fake with a bounded new_dynamic_size. (written blind, from the release alone)."""
CELL = 'register_peaks_op'
SOURCE = '''
def register_peaks_op(name: str = "ch6::peaks"):
    """Register legacy_peaks as the custom op `name`, with a fake whose output size is data-dependent; return it."""
    torch.library.define(name, "(Tensor x) -> Tensor")

    @torch.library.impl(name, "default")
    def _real(x):
        return legacy_peaks(x)

    @torch.library.register_fake(name)
    def _fake(x):
        size = torch.library.get_ctx().new_dynamic_size()
        return x.new_empty((size,), dtype=torch.int64)

    namespace, opname = name.split("::")
    return getattr(getattr(torch.ops, namespace), opname).default
'''
