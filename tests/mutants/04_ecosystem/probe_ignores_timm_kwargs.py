"""Drops **timm_kwargs: a ViT is built for 224 px instead of img_size=32, a ConvNeXt with its default depths."""
KIND = "contract"
NOTE = "The constructor's arguments describe the backbone to build: dropping in_chans or the extra timm keywords (img_size, depth, ...) builds a different model from the one asked for."
CELL = "linear_probe"
FAILS = ["test_probe_shapes", "test_probe_values"]
SOURCE = '''
class LinearProbe(nn.Module):
    """A frozen timm backbone (always in eval mode) and a new trainable linear head on its pooled pre-logit features."""

    def __init__(self, arch: str, num_classes: int, in_chans: int = 3, **timm_kwargs):
        super().__init__()
        self.backbone = timm.create_model(arch, pretrained=False, num_classes=0, in_chans=in_chans)
        self.backbone.requires_grad_(False)
        self.head = nn.Linear(self.backbone.head_hidden_size, num_classes)
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
