"""Keeps the step counter on self and never resets it: a second call on the same net starts where the first stopped."""
KIND = "state"
NOTE = "A step counter kept on self survives from one call to the next, so a second call on the same net does not start afresh. Per-call state belongs in local variables of forward."
CELL = "adaptive_depth"
FAILS = ["test_adaptive_depth_module"]
SOURCE = '''
class AdaptiveDepthNet(nn.Module):
    def __init__(self, block, tol=1e-4, max_steps=20):
        super().__init__()
        self.block, self.tol, self.max_steps = block, tol, max_steps
        self.steps = 0

    def forward(self, x):
        h = x
        while self.steps < self.max_steps:
            new = self.block(h)
            self.steps += 1
            delta = torch.linalg.vector_norm(new - h).item()
            h = new
            if delta < self.tol:
                break
        return h, self.steps
'''
