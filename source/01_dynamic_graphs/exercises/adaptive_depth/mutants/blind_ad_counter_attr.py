"""Step counter lives on self and is reset only on convergence: after a call that hit max_steps, the next call runs 0 steps and returns x. (written blind, from the release alone)."""
CELL = 'adaptive_depth'
KIND = 'state'
NOTE = "A step counter kept on self survives from one call to the next, so a second call on the same net does not start afresh. Per-call state belongs in local variables of forward."
FAILS = ['test_adaptive_depth_module']
SOURCE = '''
class AdaptiveDepthNet(nn.Module):
    """Apply one shared block until its change drops below tol, or max_steps times; forward returns (h, steps)."""

    def __init__(self, block: nn.Module, tol: float = 1e-4, max_steps: int = 20):
        super().__init__()
        self.block = block
        self.tol = tol
        self.max_steps = max_steps
        self.steps = 0

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, int]:
        h = x
        while self.steps < self.max_steps:
            new = self.block(h)
            self.steps += 1
            change = torch.linalg.vector_norm(new - h).item()
            h = new
            if change < self.tol:
                steps, self.steps = self.steps, 0    # reset for the next call
                return h, steps
        return h, self.steps
'''
