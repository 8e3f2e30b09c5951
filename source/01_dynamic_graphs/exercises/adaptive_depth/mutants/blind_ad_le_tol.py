"""Stops when the change is <= tol: with tol=0 it stops at once on an application that changes nothing. (written blind, from the release alone)."""
CELL = 'adaptive_depth'
KIND = 'edge-case'
NOTE = "The stopping test must be strict: with tol <= 0 the loop must never stop early, and a change of exactly 0 is not below a tol of 0."
FAILS = ['test_adaptive_depth_max_steps']
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
            change = torch.linalg.vector_norm(new - h).item()
            h = new
            if change <= self.tol:          # converged (fixed point reached)
                break
        return h, steps
'''
