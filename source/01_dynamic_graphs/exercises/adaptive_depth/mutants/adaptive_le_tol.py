"""Stops when the change is <= tol: with tol=0 a step that changes nothing stops the loop (the rule is strict)."""
KIND = "edge-case"
NOTE = "The stopping test must be strict: with tol <= 0 the loop must never stop early, and a change of exactly 0 is not below a tol of 0."
CELL = "adaptive_depth"
FAILS = ["test_adaptive_depth_max_steps"]
SOURCE = '''
class AdaptiveDepthNet(nn.Module):
    def __init__(self, block, tol=1e-4, max_steps=20):
        super().__init__()
        self.block, self.tol, self.max_steps = block, tol, max_steps

    def forward(self, x):
        h, steps = x, 0
        while steps < self.max_steps:
            new = self.block(h)
            steps += 1
            delta = torch.linalg.vector_norm(new - h).item()
            h = new
            if delta <= self.tol:
                break
        return h, steps
'''
