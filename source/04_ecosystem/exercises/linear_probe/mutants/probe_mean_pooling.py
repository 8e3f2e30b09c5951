"""Pools forward_features by hand (spatial mean, token mean): skips ConvNeXt's head LayerNorm, a ViT's class-token pooling and MobileNetV3's conv_head (288 wide, not 1024)."""
KIND = "wrong-value"
NOTE = "A plain mean over the feature map is not how every backbone pools: a ViT uses its class token, a ConvNeXt adds a LayerNorm, some add a layer; each timm model's own head knows its pooling and its width."
CELL = "linear_probe"
FAILS = ["test_probe_shapes", "test_probe_values"]
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
        super().train(mode)
        self.backbone.eval()
        return self

    def forward(self, x):
        with torch.no_grad():
            f = self.backbone.forward_features(x)
            features = f.mean(dim=(2, 3)) if f.ndim == 4 else f.mean(dim=1)
        return self.head(features)
'''
