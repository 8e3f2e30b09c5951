"""Starts from x.detach().clone() 'to leave x alone': the block gets gradients, x gets none. (written blind, from the release alone)."""
CELL = 'adaptive_depth'
KIND = 'graph'
NOTE = "Starting from a detached copy of x cuts the graph at the input: the block still gets gradients, but x gets none. Applying the block never changes x, so there is nothing to protect it from."
FAILS = ['test_adaptive_depth_gradients']
SOURCE = '''
class AdaptiveDepthNet(nn.Module):
    """Apply one shared block until its change drops below tol, or max_steps times; forward returns (h, steps)."""

    def __init__(self, block: nn.Module, tol: float = 1e-4, max_steps: int = 20):
        super().__init__()
        self.block = block
        self.tol = tol
        self.max_steps = max_steps

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, int]:
        h = x.detach().clone()              # work on a copy so the caller's x is never touched
        steps = 0
        while steps < self.max_steps:
            new = self.block(h)
            steps += 1
            change = torch.linalg.vector_norm(new - h).item()
            h = new
            if change < self.tol:
                break
        return h, steps
'''
