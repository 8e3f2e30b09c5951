"""Starts from x.detach(): the block's parameters get their gradients, but nothing flows back to x."""
KIND = "graph"
NOTE = "Starting from a detached copy of x cuts the graph at the input: the block still gets gradients, but x gets none. Applying the block never changes x, so there is nothing to protect it from."
CELL = "adaptive_depth"
FAILS = ["test_adaptive_depth_gradients"]
SOURCE = '''
class AdaptiveDepthNet(nn.Module):
    def __init__(self, block, tol=1e-4, max_steps=20):
        super().__init__()
        self.block, self.tol, self.max_steps = block, tol, max_steps

    def forward(self, x):
        h, steps = x.detach(), 0
        while steps < self.max_steps:
            new = self.block(h)
            steps += 1
            delta = torch.linalg.vector_norm(new - h).item()
            h = new
            if delta < self.tol:
                break
        return h, steps
'''
