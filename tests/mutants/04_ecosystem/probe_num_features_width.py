"""Head width from num_features: right for ResNet/ConvNeXt/ViT, wrong for MambaOut (head_hidden_size 256, num_features 64)."""
KIND = "overfit"
NOTE = "The pooled pre-logit width is not always num_features: some backbones' heads widen the features before the classifier (MambaOut does), so the new head must take the width of the pre-logit features."
CELL = "linear_probe"
FAILS = ["test_probe_shapes", "test_probe_values"]
SOURCE = '''
class LinearProbe(nn.Module):
    """A frozen timm backbone (always in eval mode) and a new trainable linear head on its pooled pre-logit features."""

    def __init__(self, arch: str, num_classes: int, in_chans: int = 3, **timm_kwargs):
        super().__init__()
        self.backbone = timm.create_model(arch, pretrained=False, num_classes=0, in_chans=in_chans, **timm_kwargs)
        self.backbone.requires_grad_(False)
        self.head = nn.Linear(self.backbone.num_features, num_classes)
        self.train()

    def train(self, mode: bool = True):
        super().train(mode)
        self.backbone.eval()
        return self

    def forward(self, x):
        with torch.no_grad():
            features = self.backbone.forward_head(self.backbone.forward_features(x), pre_logits=True)
        return self.head(features)
'''
