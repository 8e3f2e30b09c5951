"""Correct: a for-range loop with an early return; the change is sqrt(sum of squares) in float64 under no_grad, read with float(). (written blind, from the release alone)."""
CELL = 'adaptive_depth'
SOURCE = '''
class AdaptiveDepthNet(nn.Module):
    """Apply one shared block until its change drops below tol, or max_steps times; forward returns (h, steps)."""

    def __init__(self, block: nn.Module, tol: float = 1e-4, max_steps: int = 20):
        super().__init__()
        self.add_module("block", block)
        self.tol = float(tol)
        self.max_steps = int(max_steps)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, int]:
        h = x
        for steps in range(1, self.max_steps + 1):
            new = self.block(h)
            with torch.no_grad():
                change = float((new - h).double().pow(2).sum().sqrt())
            h = new
            if change < self.tol:
                return h, steps
        return h, self.max_steps
'''
