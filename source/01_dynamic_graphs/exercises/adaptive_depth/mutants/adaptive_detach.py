"""Detaches h inside the loop: same outputs and steps, but only the last application gets gradients."""
KIND = "graph"
NOTE = "Detaching h inside the loop cuts the graph between applications: only the last application contributes to the block's gradient, and none reaches x. Gradients must flow through every step."
CELL = "adaptive_depth"
FAILS = ["test_adaptive_depth_gradients"]
SOURCE = '''
class AdaptiveDepthNet(nn.Module):
    def __init__(self, block, tol=1e-4, max_steps=20):
        super().__init__()
        self.block, self.tol, self.max_steps = block, tol, max_steps

    def forward(self, x):
        h, steps = x, 0
        while steps < self.max_steps:
            new = self.block(h.detach())
            steps += 1
            delta = (new - h).norm().item()
            h = new
            if delta < self.tol:
                break
        return h, steps
'''
