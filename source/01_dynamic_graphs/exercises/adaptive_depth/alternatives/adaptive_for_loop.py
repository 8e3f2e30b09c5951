"""A for loop with break and torch.norm, storing the block under another name."""
CELL = "adaptive_depth"
SOURCE = '''
class AdaptiveDepthNet(nn.Module):
    def __init__(self, block, tol=1e-4, max_steps=20):
        super().__init__()
        self.f = block
        self.settings = (tol, max_steps)

    def forward(self, x):
        tol, max_steps = self.settings
        n = 0
        for n in range(1, max_steps + 1):
            y = self.f(x)
            done = float(torch.norm(y - x)) < tol
            x = y
            if done:
                break
        return x, n
'''
