"""Builds the model with a num_classes head, keeps timm's own Linear as the head, then reset_classifier(0); freezes by a loop; the forward is model(x)."""
CELL = "linear_probe"
SOURCE = '''
class LinearProbe(nn.Module):
    """A frozen timm backbone (always in eval mode) and a new trainable linear head on its pooled pre-logit features."""

    def __init__(self, arch: str, num_classes: int, in_chans: int = 3, **timm_kwargs):
        super().__init__()
        backbone = timm.create_model(arch, pretrained=False, num_classes=num_classes, in_chans=in_chans, **timm_kwargs)
        self.head = backbone.get_classifier()          # timm built it with the right input width
        backbone.reset_classifier(0)                   # now backbone(x) is the pooled pre-logit vector
        for p in backbone.parameters():
            p.requires_grad = False
        self.backbone = backbone
        self.backbone.train(False)

    def train(self, mode=True):
        self.training = mode
        self.head.train(mode)
        self.backbone.train(False)
        return self

    def forward(self, x):
        return self.head(self.backbone(x).detach())
'''
