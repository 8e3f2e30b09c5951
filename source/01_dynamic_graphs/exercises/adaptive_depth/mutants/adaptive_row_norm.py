"""Wrong reduction: averages the per-row norms instead of taking the norm over the whole tensor."""
KIND = "wrong-value"
NOTE = "The change is one 2-norm over all elements of the tensor, all batch rows together; the mean of per-row norms is a different number, so the loop can stop at the wrong step."
CELL = "adaptive_depth"
FAILS = ["test_adaptive_depth_values", "test_adaptive_depth_module"]
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
            delta = torch.linalg.vector_norm(new - h, dim=-1).mean().item()
            h = new
            if delta < self.tol:
                break
        return h, steps
'''
