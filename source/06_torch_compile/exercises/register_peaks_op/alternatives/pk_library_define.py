"""The lower-level torch.library.Library define/impl API, and register_fake by name with an unbacked size."""
CELL = "register_peaks_op"
SOURCE = '''
_PEAK_LIBRARIES = []   # a Library must stay alive, or its registrations are removed

def register_peaks_op(name: str = "ch6::peaks"):
    """Register legacy_peaks as the custom op `name`, with a fake whose output size is data-dependent; return it."""
    namespace, opname = name.split("::")
    lib = torch.library.Library(namespace, "FRAGMENT")
    lib.define(f"{opname}(Tensor x) -> Tensor")
    lib.impl(opname, lambda x: legacy_peaks(x), "CompositeExplicitAutograd")

    def fake(x):
        n = torch.library.get_ctx().new_dynamic_size()
        return torch.empty(n, dtype=torch.long, device=x.device)

    torch.library.register_fake(name, fake, lib=lib)
    _PEAK_LIBRARIES.append(lib)
    return getattr(getattr(torch.ops, namespace), opname).default
'''
