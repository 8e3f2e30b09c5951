"""lambd ignored in backward: the gradient is only negated."""
CELL = "grad_reverse"
FAILS = ["test_grad_reverse_backward", "test_grad_reverse_only_its_path", "test_grad_reverse_domain_adversarial"]
SOURCE = '''
class GradReverse(torch.autograd.Function):
    """Identity in the forward pass; multiplies the gradient by -lambd in the backward pass."""

    @staticmethod
    def forward(ctx, x, lambd):
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad_output):
        return -grad_output, None


def grad_reverse(x: torch.Tensor, lambd: float = 1.0) -> torch.Tensor:
    """Return x unchanged; on the way back its gradient is multiplied by -lambd."""
    return GradReverse.apply(x, lambd)
'''
