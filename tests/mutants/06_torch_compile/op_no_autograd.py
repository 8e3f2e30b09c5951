"""Registers the op and its fake but no autograd formula: backward through the op fails."""
CELL = "register_numpy_op"
FAILS = ["test_numpy_op_opcheck", "test_numpy_op_grad", "test_numpy_op_fullgraph"]
SOURCE = '''
def register_numpy_op(name: str = "ch6::legacy_score"):
    """Register legacy_score as the custom op `name`, with a fake impl and an autograd formula; return the op."""
    @torch.library.custom_op(name, mutates_args=())
    def legacy_score_op(x: torch.Tensor) -> torch.Tensor:
        return legacy_score(x)

    @legacy_score_op.register_fake
    def _(x):
        return x.new_empty(x.shape)

    return legacy_score_op
'''
