"""The fake implementation calls legacy_score, which needs real data (.numpy() on a fake tensor)."""
CELL = "register_numpy_op"
FAILS = ["test_numpy_op_no_breaks", "test_numpy_op_fullgraph"]
SOURCE = '''
def register_numpy_op(name: str = "ch6::legacy_score"):
    """Register legacy_score as the torch.library custom op `name` (with a fake impl); return the op."""
    @torch.library.custom_op(name, mutates_args=())
    def legacy_score_op(x: torch.Tensor) -> torch.Tensor:
        return legacy_score(x)

    @legacy_score_op.register_fake
    def _(x):
        return legacy_score(x)

    return legacy_score_op
'''
