"""Do-nothing: a module that builds nothing and returns its input; every grade cell of Exercise 4.1 must fail."""
KIND = "do-nothing"
NOTE = "The answer does not do the work the statement asks for yet: the module builds nothing and returns its input unchanged."
CELL = "linear_probe"
FAILS = ["test_probe_shapes", "test_probe_values", "test_probe_frozen", "test_probe_train_mode"]
SOURCE = '''
class LinearProbe(nn.Module):
    """A frozen timm backbone (always in eval mode) and a new trainable linear head on its pooled pre-logit features."""

    def __init__(self, arch: str, num_classes: int, in_chans: int = 3, **timm_kwargs):
        super().__init__()

    def train(self, mode: bool = True):
        """Set the mode of the module and its head; the backbone stays in eval mode. Return self."""
        pass

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Return (B, num_classes) logits: the head on the backbone's pooled pre-logit features."""
        return x
'''
