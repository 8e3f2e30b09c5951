"""Always runs max_steps: the stopping rule is ignored, so depth no longer depends on the data."""
KIND = "wrong-value"
NOTE = "Running a fixed max_steps applications ignores the stopping rule, so the depth no longer depends on the data: each application's change has to be measured and can end the loop early."
CELL = "adaptive_depth"
FAILS = ["test_adaptive_depth_values", "test_adaptive_depth_data_dependent", "test_adaptive_depth_gradients",
         "test_adaptive_depth_max_steps", "test_adaptive_depth_module"]
SOURCE = '''
class AdaptiveDepthNet(nn.Module):
    def __init__(self, block, tol=1e-4, max_steps=20):
        super().__init__()
        self.block, self.tol, self.max_steps = block, tol, max_steps

    def forward(self, x):
        h = x
        for _ in range(self.max_steps):
            h = self.block(h)
        return h, self.max_steps
'''
