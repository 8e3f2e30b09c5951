"""Pools the feature map by hand (spatial mean, width num_features): right for a ResNet only, wrong for ViT/ConvNeXt/MambaOut. (written blind, from the release alone)."""
CELL = 'linear_probe'
KIND = 'overfit'
NOTE = "A plain mean over the feature map is not how every backbone pools: a ViT uses its class token, a ConvNeXt adds a LayerNorm, some add a layer; each timm model's own head knows its pooling and its width."
FAILS = ['test_probe_shapes', 'test_probe_values']
SOURCE = '''
class LinearProbe(nn.Module):
    """A frozen timm backbone (always in eval mode) and a new trainable linear head on its pooled pre-logit features."""

    def __init__(self, arch: str, num_classes: int, in_chans: int = 3, **timm_kwargs):
        super().__init__()
        self.backbone = timm.create_model(arch, pretrained=False, num_classes=0, in_chans=in_chans, **timm_kwargs)
        self.backbone.requires_grad_(False)
        self.backbone.eval()
        self.head = nn.Linear(self.backbone.num_features, num_classes)

    def train(self, mode: bool = True):
        """Set the mode of the module and its head; the backbone stays in eval mode. Return self."""
        super().train(mode)
        self.backbone.eval()
        return self

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Return (B, num_classes) logits: the head on the backbone's pooled pre-logit features."""
        feats = self.backbone.forward_features(x)      # (B, C, H, W) for a CNN
        return self.head(feats.mean(dim=(2, 3)))       # global average pooling
'''
