"""Does nothing: keeps no block and returns the input with one step."""
KIND = "do-nothing"
NOTE = "The answer does not do the work the statement asks for yet: it never applies the block and returns its input with one step."
CELL = "adaptive_depth"
FAILS = ["test_adaptive_depth_values", "test_adaptive_depth_data_dependent", "test_adaptive_depth_gradients",
         "test_adaptive_depth_max_steps", "test_adaptive_depth_module"]
SOURCE = '''
class AdaptiveDepthNet(nn.Module):
    def __init__(self, block, tol=1e-4, max_steps=20):
        super().__init__()

    def forward(self, x):
        return x, 1
'''
