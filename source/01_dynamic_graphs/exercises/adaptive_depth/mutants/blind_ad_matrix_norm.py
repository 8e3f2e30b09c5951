"""Measures the change with linalg.matrix_norm (Frobenius): whole-tensor only for 2-D x; 1-D and 3-D+ inputs crash. (written blind, from the release alone)."""
CELL = 'adaptive_depth'
KIND = 'edge-case'
NOTE = "matrix_norm treats the last two dimensions as a matrix: it fails on a 1-D x and gives one norm per matrix for 3-D and larger inputs, while the change is one norm over the whole tensor."
FAILS = ['test_adaptive_depth_values']
SOURCE = '''
class AdaptiveDepthNet(nn.Module):
    """Apply one shared block until its change drops below tol, or max_steps times; forward returns (h, steps)."""

    def __init__(self, block: nn.Module, tol: float = 1e-4, max_steps: int = 20):
        super().__init__()
        self.block = block
        self.tol = tol
        self.max_steps = max_steps

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, int]:
        h, steps = x, 0
        while steps < self.max_steps:
            new = self.block(h)
            steps += 1
            # Frobenius norm of the (batch, features) difference = norm over all rows together
            change = torch.linalg.matrix_norm(new - h, ord="fro").item()
            h = new
            if change < self.tol:
                break
        return h, steps
'''
