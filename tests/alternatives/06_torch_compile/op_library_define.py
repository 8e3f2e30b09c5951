"""Uses the lower-level torch.library.Library define/impl API, then register_fake and register_autograd by name."""
CELL = "register_numpy_op"
SOURCE = '''
_LIBRARIES = []   # a Library must stay alive, or its registrations are removed

def register_numpy_op(name: str = "ch6::legacy_score"):
    """Register legacy_score as the custom op `name`, with a fake impl and an autograd formula; return the op."""
    namespace, opname = name.split("::")
    lib = torch.library.Library(namespace, "FRAGMENT")
    lib.define(f"{opname}(Tensor x) -> Tensor")
    lib.impl(opname, lambda x: legacy_score(x), "CompositeExplicitAutograd")
    torch.library.register_fake(name, lambda x: torch.empty(x.shape, dtype=x.dtype, device=x.device), lib=lib)

    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * (2 * x * (x > 0) + 0.5 * (x <= 0))

    torch.library.register_autograd(name, backward, setup_context=setup_context, lib=lib)
    _LIBRARIES.append(lib)
    return getattr(getattr(torch.ops, namespace), opname).default
'''
