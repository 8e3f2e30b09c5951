"""train(mode) ignores mode: .eval() / .train(False) leave the probe and its head in training mode. (written blind, from the release alone)."""
CELL = 'linear_probe'
KIND = 'state'
NOTE = "train(mode) must honour its argument: eval() goes through train(False), so ignoring it leaves the probe and its head in training mode when evaluation is asked for."
FAILS = ['test_probe_train_mode']
SOURCE = '''
class LinearProbe(nn.Module):
    """A frozen timm backbone (always in eval mode) and a new trainable linear head on its pooled pre-logit features."""

    def __init__(self, arch: str, num_classes: int, in_chans: int = 3, **timm_kwargs):
        super().__init__()
        self.backbone = timm.create_model(arch, pretrained=False, num_classes=0, in_chans=in_chans, **timm_kwargs)
        self.backbone.requires_grad_(False)
        self.head = nn.Linear(self.backbone.head_hidden_size, num_classes)
        self.train()

    def train(self, mode: bool = True):
        """Set the mode of the module and its head; the backbone stays in eval mode. Return self."""
        super().train()              # the probe and its head: training
        self.backbone.eval()         # the backbone: always eval
        return self

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Return (B, num_classes) logits: the head on the backbone's pooled pre-logit features."""
        return self.head(self.backbone.forward_head(self.backbone.forward_features(x), pre_logits=True))
'''
