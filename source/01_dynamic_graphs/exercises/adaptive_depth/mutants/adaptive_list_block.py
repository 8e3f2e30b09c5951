"""Keeps the block in a plain list: it works, but the block is not a registered submodule (no parameters)."""
KIND = "contract"
NOTE = "A module kept inside a plain Python list is not registered as a submodule: net.parameters() does not yield the block's parameters, so an optimiser would never train them."
CELL = "adaptive_depth"
FAILS = ["test_adaptive_depth_module"]
SOURCE = '''
class AdaptiveDepthNet(nn.Module):
    def __init__(self, block, tol=1e-4, max_steps=20):
        super().__init__()
        self.blocks = [block]
        self.tol, self.max_steps = tol, max_steps

    def forward(self, x):
        h, steps = x, 0
        while steps < self.max_steps:
            new = self.blocks[0](h)
            steps += 1
            delta = torch.linalg.vector_norm(new - h).item()
            h = new
            if delta < self.tol:
                break
        return h, steps
'''
