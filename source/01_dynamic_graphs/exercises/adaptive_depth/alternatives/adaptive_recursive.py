"""Recursion instead of a loop, the norm as sqrt of a sum of squares, the block kept in an nn.ModuleDict."""
CELL = "adaptive_depth"
SOURCE = '''
class AdaptiveDepthNet(nn.Module):
    def __init__(self, block, tol=1e-4, max_steps=20):
        super().__init__()
        self.parts = nn.ModuleDict({"block": block})
        self.tol = float(tol)
        self.max_steps = int(max_steps)

    def _run(self, h, done):
        new = self.parts["block"](h)
        change = float(((new - h) ** 2).sum().sqrt())
        if change < self.tol or done + 1 == self.max_steps:
            return new, done + 1
        return self._run(new, done + 1)

    def forward(self, x):
        return self._run(x, 0)
'''
