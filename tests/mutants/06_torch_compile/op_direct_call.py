"""Returns a plain function that calls the untraceable legacy_score directly (no custom op, no autograd)."""
CELL = "register_numpy_op"
FAILS = ["test_numpy_op_opcheck", "test_numpy_op_grad", "test_numpy_op_fullgraph"]
SOURCE = '''
def register_numpy_op(name: str = "ch6::legacy_score"):
    """Register legacy_score as the custom op `name`, with a fake impl and an autograd formula; return the op."""
    def legacy_score_op(x: torch.Tensor) -> torch.Tensor:
        return legacy_score(x)

    return legacy_score_op
'''
