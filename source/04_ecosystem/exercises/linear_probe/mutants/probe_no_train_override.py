"""Freezes the parameters but never overrides train(): the backbone follows the module's mode (BatchNorm updates, dropout on)."""
KIND = "state"
NOTE = "Putting the backbone in eval mode once is undone by the next .train() on the probe, since a parent's mode change reaches every child: the backbone must go back to eval whenever the mode is set."
CELL = "linear_probe"
FAILS = ["test_probe_train_mode"]
SOURCE = '''
class LinearProbe(nn.Module):
    """A frozen timm backbone (always in eval mode) and a new trainable linear head on its pooled pre-logit features."""

    def __init__(self, arch: str, num_classes: int, in_chans: int = 3, **timm_kwargs):
        super().__init__()
        self.backbone = timm.create_model(arch, pretrained=False, num_classes=0, in_chans=in_chans, **timm_kwargs)
        self.backbone.requires_grad_(False)
        self.head = nn.Linear(self.backbone.head_hidden_size, num_classes)
        self.backbone.eval()

    def forward(self, x):
        with torch.no_grad():
            features = self.backbone.forward_head(self.backbone.forward_features(x), pre_logits=True)
        return self.head(features)
'''
